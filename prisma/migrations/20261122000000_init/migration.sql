-- Initial schema, written by hand in the form `prisma migrate diff` would produce
-- (the migrate engine cannot be downloaded here; see docs/decisions.md).

CREATE TYPE "Role" AS ENUM ('read', 'comment', 'edit', 'review', 'create', 'admin');
CREATE TYPE "TeamRole" AS ENUM ('owner', 'member');
CREATE TYPE "OrganizationType" AS ENUM ('business', 'community');
CREATE TYPE "ContentVisibility" AS ENUM ('public', 'unlisted', 'share-link', 'visitor-auth', 'in-collection', 'private');
CREATE TYPE "EditMode" AS ENUM ('live', 'locked');
CREATE TYPE "RevisionType" AS ENUM ('edits', 'merge', 'rollback', 'update', 'computed');
CREATE TYPE "PageKind" AS ENUM ('document', 'group', 'link', 'computed');
CREATE TYPE "ChangeRequestStatus" AS ENUM ('draft', 'open', 'archived', 'merged');
CREATE TYPE "CommentStatus" AS ENUM ('open', 'resolved');
CREATE TYPE "SiteType" AS ENUM ('basic', 'premium', 'ultimate', 'sponsored', 'legacy-basic', 'legacy-premium');
CREATE TYPE "SiteVisibility" AS ENUM ('public', 'unlisted', 'share-link', 'visitor-auth');
CREATE TYPE "AgentsContext" AS ENUM ('excluded', 'included');
CREATE TYPE "ProcessingState" AS ENUM ('pending', 'progress', 'complete');
CREATE TYPE "JobState" AS ENUM ('pending', 'running', 'complete', 'failed');

CREATE TABLE "User" (
    "id" TEXT NOT NULL,
    "displayName" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "photoURL" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "ApiToken" (
    "id" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),
    CONSTRAINT "ApiToken_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "Organization" (
    "id" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "emailDomains" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "hostname" TEXT,
    "type" "OrganizationType" NOT NULL DEFAULT 'business',
    "useCase" TEXT,
    "communityType" TEXT,
    "defaultRole" "Role",
    "defaultContent" JSONB,
    "logo" TEXT,
    "sso" BOOLEAN NOT NULL DEFAULT false,
    "ai" BOOLEAN NOT NULL DEFAULT false,
    "inviteLinks" BOOLEAN NOT NULL DEFAULT false,
    "plan" TEXT NOT NULL DEFAULT 'free_2024',
    CONSTRAINT "Organization_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "Member" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "role" "Role",
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "sso" BOOLEAN NOT NULL DEFAULT false,
    "joinedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" TIMESTAMP(3),
    CONSTRAINT "Member_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "LinkInvite" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "role" "Role" NOT NULL DEFAULT 'read',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "LinkInvite_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "Team" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Team_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "TeamMember" (
    "teamId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "role" "TeamRole" NOT NULL DEFAULT 'member',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "TeamMember_pkey" PRIMARY KEY ("teamId","userId")
);

CREATE TABLE "Collection" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "parentId" TEXT,
    "ancestorIds" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "title" TEXT NOT NULL,
    "description" TEXT,
    "defaultLevel" "Role",
    "position" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "Collection_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "Space" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "parentId" TEXT,
    "ancestorIds" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "title" TEXT NOT NULL,
    "emoji" TEXT,
    "icon" TEXT,
    "visibility" "ContentVisibility" NOT NULL DEFAULT 'private',
    "editMode" "EditMode" NOT NULL DEFAULT 'live',
    "defaultLevel" "Role",
    "position" INTEGER NOT NULL DEFAULT 0,
    "revisionId" TEXT,
    "changeRequestSeq" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "deletedAt" TIMESTAMP(3),
    "deletedById" TEXT,
    CONSTRAINT "Space_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "ContentGrant" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "spaceId" TEXT,
    "collectionId" TEXT,
    "userId" TEXT,
    "teamId" TEXT,
    "role" "Role" NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ContentGrant_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "Revision" (
    "id" TEXT NOT NULL,
    "spaceId" TEXT NOT NULL,
    "parents" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "type" "RevisionType" NOT NULL DEFAULT 'edits',
    "tree" JSONB NOT NULL DEFAULT '[]',
    "pageVersionIds" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "fileIds" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "variables" JSONB NOT NULL DEFAULT '{}',
    "reusableContents" JSONB NOT NULL DEFAULT '[]',
    "changeRequestId" TEXT,
    "createdById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Revision_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "PageVersion" (
    "id" TEXT NOT NULL,
    "pageId" TEXT NOT NULL,
    "spaceId" TEXT NOT NULL,
    "kind" "PageKind" NOT NULL DEFAULT 'document',
    "title" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "emoji" TEXT,
    "icon" TEXT,
    "description" TEXT,
    "markdown" TEXT NOT NULL DEFAULT '',
    "href" TEXT,
    "hidden" BOOLEAN NOT NULL DEFAULT false,
    "layout" JSONB,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "pageCreatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "PageVersion_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "File" (
    "id" TEXT NOT NULL,
    "spaceId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "contentType" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "width" INTEGER,
    "height" INTEGER,
    "storageKey" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "File_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "ImportJob" (
    "id" TEXT NOT NULL,
    "spaceId" TEXT NOT NULL,
    "changeRequestId" TEXT,
    "url" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "state" "JobState" NOT NULL DEFAULT 'pending',
    "error" TEXT,
    "revisionId" TEXT,
    "importedResources" INTEGER NOT NULL DEFAULT 0,
    "totalResources" INTEGER NOT NULL DEFAULT 0,
    "createdById" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMP(3),
    CONSTRAINT "ImportJob_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "ChangeRequest" (
    "id" TEXT NOT NULL,
    "spaceId" TEXT NOT NULL,
    "number" INTEGER NOT NULL,
    "status" "ChangeRequestStatus" NOT NULL DEFAULT 'open',
    "subject" TEXT NOT NULL DEFAULT '',
    "agentTaskId" TEXT,
    "createdById" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "revisionInitialId" TEXT NOT NULL,
    "revisionId" TEXT NOT NULL,
    "revisionMergedAncestorId" TEXT,
    "revisionMergedId" TEXT,
    "mergedAt" TIMESTAMP(3),
    "pdfStorageKey" TEXT,
    CONSTRAINT "ChangeRequest_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "Comment" (
    "id" TEXT NOT NULL,
    "spaceId" TEXT NOT NULL,
    "changeRequestId" TEXT,
    "parentId" TEXT,
    "authorId" TEXT NOT NULL,
    "markdown" TEXT NOT NULL,
    "node" TEXT,
    "pageId" TEXT,
    "pageVersionId" TEXT,
    "revisionId" TEXT,
    "status" "CommentStatus" NOT NULL DEFAULT 'open',
    "resolvedAt" TIMESTAMP(3),
    "resolvedById" TEXT,
    "postedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "editedAt" TIMESTAMP(3),
    CONSTRAINT "Comment_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "Reaction" (
    "commentId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "emoji" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Reaction_pkey" PRIMARY KEY ("commentId","userId","emoji")
);

CREATE TABLE "Site" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "type" "SiteType" NOT NULL DEFAULT 'basic',
    "title" TEXT NOT NULL,
    "visibility" "SiteVisibility" NOT NULL DEFAULT 'public',
    "basename" TEXT,
    "hostname" TEXT,
    "proxy" TEXT,
    "published" BOOLEAN NOT NULL DEFAULT false,
    "adaptiveContentEnabled" BOOLEAN NOT NULL DEFAULT false,
    "adaptiveSchema" JSONB,
    "adaptiveSchemaUpdatedAt" TIMESTAMP(3),
    "agentsContext" "AgentsContext" NOT NULL DEFAULT 'included',
    "defaultSiteSpaceId" TEXT,
    "defaultSiteSectionId" TEXT,
    "icon" JSONB,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "Site_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "SiteSectionGroup" (
    "id" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "icon" TEXT,
    "position" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SiteSectionGroup_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "SiteSection" (
    "id" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "groupId" TEXT,
    "title" TEXT NOT NULL,
    "description" TEXT,
    "path" TEXT NOT NULL,
    "condition" TEXT,
    "icon" TEXT,
    "position" INTEGER NOT NULL DEFAULT 0,
    "defaultSiteSpaceId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SiteSection_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "SiteSpace" (
    "id" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "sectionId" TEXT,
    "spaceId" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "condition" TEXT,
    "position" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SiteSpace_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "ShareLink" (
    "id" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ShareLink_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "SamlProvider" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "entityID" TEXT,
    "certificate" TEXT,
    "ssoURL" TEXT,
    "defaultTeamId" TEXT,
    "defaultRole" "Role",
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SamlProvider_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "OpenApiSpec" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "sourceURL" TEXT,
    "sourceText" TEXT,
    "processingState" "ProcessingState" NOT NULL DEFAULT 'pending',
    "lastVersionId" TEXT,
    "lastProcessedAt" TIMESTAMP(3),
    "lastProcessErrorCode" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "OpenApiSpec_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "OpenApiSpecVersion" (
    "id" TEXT NOT NULL,
    "specId" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "contentHash" TEXT NOT NULL,
    "filesystem" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "OpenApiSpecVersion_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "TranslationSettings" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "languages" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "TranslationSettings_pkey" PRIMARY KEY ("id")
);

-- Indexes
CREATE UNIQUE INDEX "User_email_key" ON "User"("email");
CREATE UNIQUE INDEX "ApiToken_tokenHash_key" ON "ApiToken"("tokenHash");
CREATE INDEX "ApiToken_userId_idx" ON "ApiToken"("userId");
CREATE UNIQUE INDEX "Organization_hostname_key" ON "Organization"("hostname");
CREATE INDEX "Organization_emailDomains_idx" ON "Organization" USING GIN ("emailDomains");
CREATE UNIQUE INDEX "Member_organizationId_userId_key" ON "Member"("organizationId", "userId");
CREATE INDEX "Member_userId_idx" ON "Member"("userId");
CREATE INDEX "Member_organizationId_joinedAt_idx" ON "Member"("organizationId", "joinedAt");
CREATE INDEX "Member_organizationId_lastSeenAt_idx" ON "Member"("organizationId", "lastSeenAt");
CREATE INDEX "LinkInvite_organizationId_idx" ON "LinkInvite"("organizationId");
CREATE INDEX "Team_organizationId_createdAt_idx" ON "Team"("organizationId", "createdAt");
CREATE INDEX "TeamMember_userId_idx" ON "TeamMember"("userId");
CREATE INDEX "Collection_organizationId_parentId_position_idx" ON "Collection"("organizationId", "parentId", "position");
CREATE INDEX "Collection_parentId_idx" ON "Collection"("parentId");
CREATE INDEX "Collection_ancestorIds_idx" ON "Collection" USING GIN ("ancestorIds");
CREATE UNIQUE INDEX "Space_revisionId_key" ON "Space"("revisionId");
CREATE INDEX "Space_organizationId_parentId_position_idx" ON "Space"("organizationId", "parentId", "position");
CREATE INDEX "Space_parentId_idx" ON "Space"("parentId");
CREATE INDEX "Space_ancestorIds_idx" ON "Space" USING GIN ("ancestorIds");
CREATE INDEX "Space_deletedAt_idx" ON "Space"("deletedAt");
CREATE INDEX "ContentGrant_organizationId_idx" ON "ContentGrant"("organizationId");
CREATE INDEX "ContentGrant_spaceId_idx" ON "ContentGrant"("spaceId");
CREATE INDEX "ContentGrant_collectionId_idx" ON "ContentGrant"("collectionId");
CREATE INDEX "ContentGrant_userId_idx" ON "ContentGrant"("userId");
CREATE INDEX "ContentGrant_teamId_idx" ON "ContentGrant"("teamId");
CREATE INDEX "Revision_spaceId_createdAt_idx" ON "Revision"("spaceId", "createdAt");
CREATE INDEX "Revision_changeRequestId_idx" ON "Revision"("changeRequestId");
CREATE INDEX "Revision_pageVersionIds_idx" ON "Revision" USING GIN ("pageVersionIds");
CREATE INDEX "PageVersion_spaceId_pageId_idx" ON "PageVersion"("spaceId", "pageId");
CREATE INDEX "PageVersion_pageId_idx" ON "PageVersion"("pageId");
CREATE INDEX "File_spaceId_idx" ON "File"("spaceId");
CREATE INDEX "ImportJob_spaceId_idx" ON "ImportJob"("spaceId");
CREATE UNIQUE INDEX "ChangeRequest_spaceId_number_key" ON "ChangeRequest"("spaceId", "number");
CREATE INDEX "ChangeRequest_spaceId_status_createdAt_idx" ON "ChangeRequest"("spaceId", "status", "createdAt");
CREATE INDEX "ChangeRequest_createdById_idx" ON "ChangeRequest"("createdById");
CREATE INDEX "Comment_spaceId_changeRequestId_postedAt_idx" ON "Comment"("spaceId", "changeRequestId", "postedAt");
CREATE INDEX "Comment_changeRequestId_idx" ON "Comment"("changeRequestId");
CREATE INDEX "Comment_parentId_postedAt_idx" ON "Comment"("parentId", "postedAt");
CREATE INDEX "Comment_authorId_idx" ON "Comment"("authorId");
CREATE UNIQUE INDEX "Site_hostname_key" ON "Site"("hostname");
CREATE INDEX "Site_organizationId_createdAt_idx" ON "Site"("organizationId", "createdAt");
CREATE INDEX "SiteSectionGroup_siteId_position_idx" ON "SiteSectionGroup"("siteId", "position");
CREATE UNIQUE INDEX "SiteSection_siteId_path_key" ON "SiteSection"("siteId", "path");
CREATE INDEX "SiteSection_siteId_position_idx" ON "SiteSection"("siteId", "position");
CREATE INDEX "SiteSection_groupId_idx" ON "SiteSection"("groupId");
CREATE INDEX "SiteSpace_siteId_sectionId_position_idx" ON "SiteSpace"("siteId", "sectionId", "position");
CREATE INDEX "SiteSpace_sectionId_idx" ON "SiteSpace"("sectionId");
CREATE INDEX "SiteSpace_spaceId_idx" ON "SiteSpace"("spaceId");
CREATE UNIQUE INDEX "ShareLink_key_key" ON "ShareLink"("key");
CREATE INDEX "ShareLink_siteId_createdAt_idx" ON "ShareLink"("siteId", "createdAt");
CREATE INDEX "SamlProvider_organizationId_createdAt_idx" ON "SamlProvider"("organizationId", "createdAt");
CREATE INDEX "SamlProvider_defaultTeamId_idx" ON "SamlProvider"("defaultTeamId");
CREATE UNIQUE INDEX "OpenApiSpec_organizationId_slug_key" ON "OpenApiSpec"("organizationId", "slug");
CREATE INDEX "OpenApiSpecVersion_specId_createdAt_idx" ON "OpenApiSpecVersion"("specId", "createdAt");
CREATE INDEX "TranslationSettings_organizationId_createdAt_idx" ON "TranslationSettings"("organizationId", "createdAt");

-- Foreign keys
ALTER TABLE "ApiToken" ADD CONSTRAINT "ApiToken_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Member" ADD CONSTRAINT "Member_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Member" ADD CONSTRAINT "Member_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "LinkInvite" ADD CONSTRAINT "LinkInvite_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Team" ADD CONSTRAINT "Team_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "TeamMember" ADD CONSTRAINT "TeamMember_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "TeamMember" ADD CONSTRAINT "TeamMember_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Collection" ADD CONSTRAINT "Collection_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Collection" ADD CONSTRAINT "Collection_parentId_fkey" FOREIGN KEY ("parentId") REFERENCES "Collection"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "Space" ADD CONSTRAINT "Space_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Space" ADD CONSTRAINT "Space_parentId_fkey" FOREIGN KEY ("parentId") REFERENCES "Collection"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "Space" ADD CONSTRAINT "Space_revisionId_fkey" FOREIGN KEY ("revisionId") REFERENCES "Revision"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "ContentGrant" ADD CONSTRAINT "ContentGrant_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "ContentGrant" ADD CONSTRAINT "ContentGrant_spaceId_fkey" FOREIGN KEY ("spaceId") REFERENCES "Space"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "ContentGrant" ADD CONSTRAINT "ContentGrant_collectionId_fkey" FOREIGN KEY ("collectionId") REFERENCES "Collection"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "ContentGrant" ADD CONSTRAINT "ContentGrant_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "ContentGrant" ADD CONSTRAINT "ContentGrant_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Revision" ADD CONSTRAINT "Revision_spaceId_fkey" FOREIGN KEY ("spaceId") REFERENCES "Space"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Revision" ADD CONSTRAINT "Revision_changeRequestId_fkey" FOREIGN KEY ("changeRequestId") REFERENCES "ChangeRequest"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "PageVersion" ADD CONSTRAINT "PageVersion_spaceId_fkey" FOREIGN KEY ("spaceId") REFERENCES "Space"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "File" ADD CONSTRAINT "File_spaceId_fkey" FOREIGN KEY ("spaceId") REFERENCES "Space"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "ImportJob" ADD CONSTRAINT "ImportJob_spaceId_fkey" FOREIGN KEY ("spaceId") REFERENCES "Space"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "ChangeRequest" ADD CONSTRAINT "ChangeRequest_spaceId_fkey" FOREIGN KEY ("spaceId") REFERENCES "Space"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Comment" ADD CONSTRAINT "Comment_spaceId_fkey" FOREIGN KEY ("spaceId") REFERENCES "Space"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Comment" ADD CONSTRAINT "Comment_changeRequestId_fkey" FOREIGN KEY ("changeRequestId") REFERENCES "ChangeRequest"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Comment" ADD CONSTRAINT "Comment_parentId_fkey" FOREIGN KEY ("parentId") REFERENCES "Comment"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Reaction" ADD CONSTRAINT "Reaction_commentId_fkey" FOREIGN KEY ("commentId") REFERENCES "Comment"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Site" ADD CONSTRAINT "Site_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "SiteSectionGroup" ADD CONSTRAINT "SiteSectionGroup_siteId_fkey" FOREIGN KEY ("siteId") REFERENCES "Site"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "SiteSection" ADD CONSTRAINT "SiteSection_siteId_fkey" FOREIGN KEY ("siteId") REFERENCES "Site"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "SiteSection" ADD CONSTRAINT "SiteSection_groupId_fkey" FOREIGN KEY ("groupId") REFERENCES "SiteSectionGroup"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "SiteSpace" ADD CONSTRAINT "SiteSpace_siteId_fkey" FOREIGN KEY ("siteId") REFERENCES "Site"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "SiteSpace" ADD CONSTRAINT "SiteSpace_sectionId_fkey" FOREIGN KEY ("sectionId") REFERENCES "SiteSection"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "SiteSpace" ADD CONSTRAINT "SiteSpace_spaceId_fkey" FOREIGN KEY ("spaceId") REFERENCES "Space"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "ShareLink" ADD CONSTRAINT "ShareLink_siteId_fkey" FOREIGN KEY ("siteId") REFERENCES "Site"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "SamlProvider" ADD CONSTRAINT "SamlProvider_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "SamlProvider" ADD CONSTRAINT "SamlProvider_defaultTeamId_fkey" FOREIGN KEY ("defaultTeamId") REFERENCES "Team"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "OpenApiSpec" ADD CONSTRAINT "OpenApiSpec_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "OpenApiSpecVersion" ADD CONSTRAINT "OpenApiSpecVersion_specId_fkey" FOREIGN KEY ("specId") REFERENCES "OpenApiSpec"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "TranslationSettings" ADD CONSTRAINT "TranslationSettings_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Beyond Prisma's reach: full-text search over page versions (English configuration,
-- title weighted above body). Generated, so it can never disagree with the markdown.
ALTER TABLE "PageVersion" ADD COLUMN "searchVector" tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', coalesce("title", '')), 'A') ||
    setweight(to_tsvector('english', coalesce("markdown", '')), 'B')
) STORED;
CREATE INDEX "PageVersion_searchVector_idx" ON "PageVersion" USING GIN ("searchVector");

-- Lookups the change-request area does: merge revisions back to their change request, and the
-- `contributor` filter (authors of a change request's revisions).
CREATE INDEX "ChangeRequest_revisionMergedId_idx" ON "ChangeRequest"("revisionMergedId");
CREATE INDEX "Revision_changeRequestId_createdById_idx" ON "Revision"("changeRequestId", "createdById");

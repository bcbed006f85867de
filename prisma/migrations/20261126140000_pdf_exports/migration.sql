-- PDF exports as background jobs (issue 20, item 5): rendering left the request path, so an
-- export is a row with a state, keyed by the change request's head revision and the pages
-- asked for (`scope`), written by the job when done. The GET of the contract no longer writes the
-- change request: its "pdfStorageKey" goes (PDFs stored under it become orphans; the hourly
-- sweep deletes them).
CREATE TABLE "PdfExport" (
    "id" TEXT NOT NULL,
    "spaceId" TEXT NOT NULL,
    "changeRequestId" TEXT NOT NULL,
    "revisionId" TEXT NOT NULL,
    "scope" TEXT NOT NULL DEFAULT '',
    "state" "JobState" NOT NULL DEFAULT 'pending',
    "error" TEXT,
    "storageKey" TEXT,
    "byteSize" INTEGER,
    "pageCount" INTEGER NOT NULL DEFAULT 0,
    "createdById" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "PdfExport_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "PdfExport_changeRequestId_revisionId_scope_key" ON "PdfExport"("changeRequestId", "revisionId", "scope");

ALTER TABLE "PdfExport" ADD CONSTRAINT "PdfExport_changeRequestId_fkey" FOREIGN KEY ("changeRequestId") REFERENCES "ChangeRequest"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "ChangeRequest" DROP COLUMN "pdfStorageKey";

-- Stored file bytes in the database (src/lib/storage.ts PostgresFileStorage, the default
-- FILE_STORAGE): every gateway process serves what any of them stored. One row per storage key;
-- no foreign key (bytes are written before the row that refers to them commits, and the orphan
-- sweep removes bytes no row refers to, src/domain/cleanup.ts).
CREATE TABLE "FileBlob" (
    -- Byte order: the sweep pages through keys with `"key" > $1 ORDER BY "key"` on the primary key.
    "key" TEXT COLLATE "C" NOT NULL,
    "content" BYTEA NOT NULL,
    "contentType" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "modifiedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "FileBlob_pkey" PRIMARY KEY ("key")
);
-- Images, PDFs and archives are compressed already: store them out of line without trying again.
ALTER TABLE "FileBlob" ALTER COLUMN "content" SET STORAGE EXTERNAL;

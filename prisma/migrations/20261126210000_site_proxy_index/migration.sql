-- The URL lookup (publishedContentByUrl, GET /v1/urls/published) finds a site by its proxy origin:
-- an index, so it never scans the sites.
CREATE INDEX "Site_proxy_idx" ON "Site"("proxy");

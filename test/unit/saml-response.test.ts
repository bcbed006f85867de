import { describe, expect, it } from 'vitest';
import { validateSamlResponse } from '../../src/lib/saml-response.ts';
import { makeSelfSignedCert } from '../fixtures/make-cert.ts';
import { buildSignedSamlResponse } from '../fixtures/saml.ts';
import { parseCertificate } from '../../src/lib/x509.ts';

const idp = makeSelfSignedCert('idp');
const base = { issuer: 'https://idp.test/metadata', audience: 'https://docgraph.test/sso/saml/1/metadata', acsUrl: 'https://docgraph.test/sso/saml/1/acs' };
const check = (samlResponseB64: string, certPem = idp.certPem, spEntityId = base.audience) =>
  validateSamlResponse({ samlResponseB64, idpCertPem: certPem, idpEntityId: base.issuer, spEntityId, acsUrl: base.acsUrl, ssoUrl: 'https://idp.test/sso' });

describe('SAML responses', () => {
  it('accepts a response signed by the configured provider', async () => {
    const r = await check(buildSignedSamlResponse({ ...base, keyPem: idp.keyPem, certPem: idp.certPem, email: 'Ada@Example.com', displayName: 'Ada' }));
    expect(r).toEqual({ ok: true, email: 'ada@example.com', displayName: 'Ada', nameId: 'Ada@Example.com' });
  });

  it('rejects a tampered response, another key, and the wrong audience', async () => {
    const good = Buffer.from(buildSignedSamlResponse({ ...base, keyPem: idp.keyPem, certPem: idp.certPem, email: 'ada@example.com' }), 'base64').toString();
    const tampered = Buffer.from(good.replace(/ada@example\.com/g, 'eve@example.com')).toString('base64');
    expect((await check(tampered)).ok).toBe(false);
    const other = makeSelfSignedCert('other');
    expect((await check(buildSignedSamlResponse({ ...base, keyPem: other.keyPem, certPem: other.certPem, email: 'ada@example.com' }))).ok).toBe(false);
    expect((await check(buildSignedSamlResponse({ ...base, keyPem: idp.keyPem, certPem: idp.certPem, email: 'a@b.c' }), idp.certPem, 'https://someone-else')).ok).toBe(false);
  });
});

describe('certificates', () => {
  it('parses PEM with or without armor and rejects garbage', () => {
    const parsed = parseCertificate(idp.certPem);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.validTo.getTime()).toBeGreaterThan(Date.now());
    const bare = idp.certPem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
    expect(parseCertificate(bare).ok).toBe(true);
    expect(parseCertificate('garbage').ok).toBe(false);
  });
});

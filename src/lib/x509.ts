// X.509 certificates in PEM (SAML identity providers), parsed with Node's crypto.
import crypto from 'node:crypto';

export type ParsedCertificate =
  | { ok: true; validTo: Date; validFrom: Date; subject: string; fingerprint256: string; pem: string }
  | { ok: false; message: string };

/** Accepts PEM with or without the BEGIN/END armor (bare base64 is common in SAML metadata). */
export function parseCertificate(input: string): ParsedCertificate {
  const text = input.trim();
  const pem = text.includes('-----BEGIN CERTIFICATE-----')
    ? text
    : `-----BEGIN CERTIFICATE-----\n${(text.replace(/\s+/g, '').match(/.{1,64}/g) ?? []).join('\n')}\n-----END CERTIFICATE-----`;
  try {
    const cert = new crypto.X509Certificate(pem);
    return { ok: true, validTo: new Date(cert.validTo), validFrom: new Date(cert.validFrom), subject: cert.subject, fingerprint256: cert.fingerprint256, pem: cert.toString() };
  } catch (e) {
    return { ok: false, message: `not a valid X.509 certificate in PEM (${(e as Error).message})` };
  }
}

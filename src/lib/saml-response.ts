// Validates a SAML Response posted to our assertion consumer service with @node-saml/node-saml:
// the signature against the provider's certificate, issuer, audience, destination and validity
// window. Returns who signed in.
import { SAML, ValidateInResponseTo } from '@node-saml/node-saml';

export type SamlValidation = { ok: true; email: string; displayName?: string; nameId: string } | { ok: false; message: string };

export async function validateSamlResponse(opts: {
  samlResponseB64: string;
  idpCertPem: string;
  idpEntityId: string;
  spEntityId: string;
  acsUrl: string;
  ssoUrl: string;
  /** Accepted for symmetry with the injectable clock; node-saml reads the system time itself. */
  now?: Date;
}): Promise<SamlValidation> {
  const saml = new SAML({
    idpCert: opts.idpCertPem,
    idpIssuer: opts.idpEntityId,
    issuer: opts.spEntityId,
    audience: opts.spEntityId,
    callbackUrl: opts.acsUrl,
    entryPoint: opts.ssoUrl,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    validateInResponseTo: ValidateInResponseTo.never,
    acceptedClockSkewMs: 60_000,
  });
  try {
    const { profile } = await saml.validatePostResponseAsync({ SAMLResponse: opts.samlResponseB64 });
    if (!profile) return { ok: false, message: 'the response carries no assertion' };
    const attrs = profile as Record<string, unknown>;
    const email = String(profile.email ?? profile.mail ?? attrs['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress'] ?? profile.nameID ?? '').trim().toLowerCase();
    if (!/^[^@\s]+@[^@\s]+$/.test(email)) return { ok: false, message: 'the assertion carries no e-mail address' };
    const displayName = (attrs.displayName ?? attrs.name) as string | undefined;
    return { ok: true, email, displayName: typeof displayName === 'string' ? displayName : undefined, nameId: profile.nameID };
  } catch (e) {
    return { ok: false, message: (e as Error).message };
  }
}

/**
 * API key material. A key is `hfk_<prefix>_<secret>`: the prefix (48 random bits, hex) finds the
 * stored record and is safe to show in lists; the secret (256 random bits) makes the key. Only the
 * SHA-256 of the whole key is stored: a key has full entropy, so a slow password hash would add latency
 * to every request and no security.
 */
const KEY_PATTERN = /^hfk_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/;

function hex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function randomHex(bytes: number): string {
  return hex(crypto.getRandomValues(new Uint8Array(bytes)));
}

export function newApiKey(): { key: string; prefix: string } {
  const prefix = randomHex(6);
  return { key: `hfk_${prefix}_${base64url(crypto.getRandomValues(new Uint8Array(32)))}`, prefix };
}

/**
 * Error messages name what the client sent ("no database named …"); a key pasted into the wrong field
 * would come back in the answer, and on to wherever answers are logged. Every error message passes here.
 */
export function redactKeys(text: string): string {
  // hfr_ is a GPU host's registration token (src/db/registration-tokens.ts): the same shape, the same care.
  return text.replace(/(hf[kr])_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/g, "$1_[redacted]");
}

/** The lookup prefix of a well-formed key; undefined for anything else (which is never looked up). */
export function keyPrefix(key: string): string | undefined {
  return KEY_PATTERN.exec(key)?.[1];
}

export async function hashKey(key: string): Promise<string> {
  return hex(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key))));
}

/** Constant-time, so a response's timing says nothing about how much of a secret or hash matched. */
export function sameSecret(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  return x.byteLength === y.byteLength && crypto.subtle.timingSafeEqual(x, y);
}

/** The bearer token of an Authorization header, or undefined. */
export function bearer(header: string | undefined): string | undefined {
  return /^Bearer ([^\s]+)$/.exec(header ?? "")?.[1];
}

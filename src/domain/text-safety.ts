/**
 * Text every store keeps as it was given: no NUL character (PostgreSQL refuses it in text) and no half of a UTF-16
 * surrogate pair (it cannot be encoded, and would be replaced on the way to the database).
 */

/** Why a string cannot be stored as given, or null when it can. */
export function unstorableText(s: string): string | null {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) return 'must not contain the NUL character (U+0000)';
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return 'must not contain half of a surrogate pair (invalid UTF-16)';
    }
    if (c >= 0xdc00 && c <= 0xdfff) return 'must not contain half of a surrogate pair (invalid UTF-16)';
  }
  return null;
}

/**
 * The first string in a parsed value (object keys included) that cannot be stored, with its path in the request's
 * terms (`body.recipient.to`, `query.searchBy[refClient]`), or null.
 */
export function findUnstorableText(value: unknown, path: string, depth = 0): { path: string; reason: string } | null {
  if (typeof value === 'string') {
    const reason = unstorableText(value);
    return reason ? { path, reason } : null;
  }
  if (value === null || typeof value !== 'object' || depth > 64) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorableText(value[i], `${path}[${i}]`, depth + 1);
      if (found) return found;
    }
    return null;
  }
  for (const [k, v] of Object.entries(value)) {
    const keyReason = unstorableText(k);
    if (keyReason) return { path, reason: `a field name ${keyReason}` };
    const found = findUnstorableText(v, /^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${k}]`, depth + 1);
    if (found) return found;
  }
  return null;
}

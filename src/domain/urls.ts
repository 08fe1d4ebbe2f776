export const MAX_CALLBACK_URL_LENGTH = 255;

/** null when the value is an acceptable callback URL, else the reason. */
export function callbackUrlProblem(value: string): string | null {
  if (value.length > MAX_CALLBACK_URL_LENGTH) return `must be at most ${MAX_CALLBACK_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not carry credentials';
  return null;
}

/** The origin (scheme, host, port) of a URL: webhook deliveries are bounded and queued per origin. Null if unparsable. */
export function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

const LOCAL_ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?$/;
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * Parses an API date: ISO 8601 with an offset, or without one (then read as UTC, the way Tern emits dates).
 * Returns null for anything else.
 */
export function parseApiDate(value: string): Date | null {
  const v = value.trim();
  let d: Date;
  if (ISO_WITH_OFFSET.test(v)) d = new Date(v);
  else if (LOCAL_ISO.test(v)) d = new Date(v.length === 10 ? `${v}T00:00:00Z` : `${v}Z`);
  else return null;
  return Number.isNaN(d.getTime()) ? null : d;
}

/** YYYY-MM-DD only (consumption periods). */
export function parseDay(value: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return null;
  const d = new Date(`${value}T00:00:00Z`);
  return Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value ? null : value;
}

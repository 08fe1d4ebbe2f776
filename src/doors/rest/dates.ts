import { parseRequestedDate, type RequestedDate } from '../../domain/dates.ts';
import { fail } from '../../core/errors.ts';

/**
 * A `sentDate` of a request: ISO 8601 with an offset is taken as written; without one (`2030-01-15T10:30`), it is
 * read in the organisation's time zone when the message is prepared.
 */
export function sendDateParam(value: string | null | undefined, field: string): RequestedDate | null {
  if (value === undefined || value === null || value === '') return null;
  return parseRequestedDate(value) ?? fail('INVALID_DATE', `${field}: "${value}" is not an ISO 8601 date`);
}

import type { CsvRecord } from './csv.ts';

/** The header names a campaign file's number and reference columns go by (any case). */
export const NUMBER_COLUMNS = ['number', 'numero', 'msisdn', 'to', 'phone', 'recipient'];
export const REF_COLUMNS = ['refclient', 'ref', 'reference'];

export interface CsvRecipient {
  to: string;
  refClient?: string;
  /** Every other column by its header; an empty cell gives no value (the variable's default applies). */
  values: Record<string, string>;
  /** `row 2 (line 3)`: the data row from 1, and the file's line. */
  label: string;
}

export class CampaignCsvError extends Error {}

/**
 * The recipients of a campaign file with a header: the number column, an optional reference column, and every other
 * column a variable named by its header.
 */
export function csvRecipients(records: CsvRecord[]): CsvRecipient[] {
  const [head, ...rows] = records;
  if (!head) throw new CampaignCsvError('the file is empty');
  const names = head.fields.map((f) => f.trim());
  const lower = names.map((n) => n.toLowerCase());
  const n = lower.findIndex((h) => NUMBER_COLUMNS.includes(h));
  if (n < 0) throw new CampaignCsvError(`the first line is a header with a number column (${NUMBER_COLUMNS.join(', ')})`);
  const r = lower.findIndex((h) => REF_COLUMNS.includes(h));
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new CampaignCsvError(`the column ${name} is named twice`);
    seen.add(name);
  }
  if (rows.length === 0) throw new CampaignCsvError('the file has no rows under its header');
  return rows.map(({ line, fields }, i) => {
    // fromEntries defines own properties: a column named __proto__ is a value like any other.
    const values: Record<string, string> = Object.fromEntries(
      names.flatMap((name, k) => (k !== n && k !== r && name !== '' && (fields[k] ?? '') !== '' ? [[name, fields[k]!]] : [])),
    );
    const ref = r >= 0 ? fields[r]?.trim() : undefined;
    return { to: (fields[n] ?? '').trim(), ...(ref && { refClient: ref }), values, label: `row ${i + 1} (line ${line})` };
  });
}

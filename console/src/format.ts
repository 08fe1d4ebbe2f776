export function euros(amount: number | undefined | null, digits = 4): string {
  if (amount === undefined || amount === null) return '—';
  return `${amount.toLocaleString('en-GB', { minimumFractionDigits: 2, maximumFractionDigits: digits })} €`;
}

export function when(iso: string | undefined | null): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toLocaleString('en-GB', { year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** A message's text, whatever its type. */
export function bodyText(body: any): string {
  if (!body) return '';
  if (typeof body.text === 'string') return body.text;
  if (body.content?.title) return body.content.title;
  if (body.type) return `[${body.type}]`;
  return '';
}

export function download(name: string, text: string, type = 'text/csv'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export const FINAL_STATUSES = ['DELIVERED', 'UNDELIVERABLE', 'UNDELIVERED', 'READ', 'CANCELLED', 'RECEIVED'];

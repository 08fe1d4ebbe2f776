import { useEffect, useRef, useState } from 'preact/hooks';
import { parseCsv } from '../../../src/domain/csv.ts';
import { apiOf, get, keys, post, query } from '../api.ts';
import { bodyText, euros, FINAL_STATUSES, when } from '../format.ts';
import { navigate } from '../router.ts';
import { useSession } from '../session.ts';
import { follow } from '../sse.ts';
import { Empty, ErrorBox, Field, Notice, Page, Status, useAction, useLoad } from '../ui.tsx';

interface Row {
  to: string;
  refClient?: string;
}

/**
 * Recipients of a CSV file: the number in the first column (or one named number/msisdn/to), refClient if named or
 * second; the lines of rows without a number are skipped. A malformed file is a CsvError naming its line.
 */
export function recipientsOf(text: string): { rows: Row[]; skipped: number[] } {
  const table = parseCsv(text);
  if (table.length === 0) return { rows: [], skipped: [] };
  const first = table[0]!.fields;
  const head = first.map((c) => c.trim().toLowerCase());
  const hasHeader = !/\d{6,}/.test(first[0] ?? '') && head.some((c) => /[a-z]/.test(c));
  const numberCol = hasHeader
    ? Math.max(
        0,
        head.findIndex((c) => ['number', 'numero', 'msisdn', 'to', 'phone', 'recipient'].includes(c)),
      )
    : 0;
  const refCol = hasHeader ? head.findIndex((c) => ['refclient', 'ref', 'reference'].includes(c)) : first.length > 1 ? 1 : -1;
  const rows: Row[] = [];
  const skipped: number[] = [];
  for (const { line, fields } of table.slice(hasHeader ? 1 : 0)) {
    const to = (fields[numberCol] ?? '').trim();
    if (!/\d/.test(to)) skipped.push(line);
    else rows.push({ to, ...(refCol >= 0 && fields[refCol]?.trim() ? { refClient: fields[refCol]!.trim() } : {}) });
  }
  return { rows, skipped };
}

function NewCampaign({ base, type }: { base: string; type: string }) {
  const [file, setFile] = useState<{ name: string; rows: Row[]; skipped: number[] } | null>(null);
  const [fileError, setFileError] = useState<Error | null>(null);
  const [text, setText] = useState('');
  const [refClient, setRefClient] = useState('');
  const [sentDate, setSentDate] = useState('');
  const [quote, setQuote] = useState<any>(null);
  const fileInput = useRef<HTMLInputElement>(null);

  useEffect(() => {
    const t = setTimeout(() => {
      if (!text) return setQuote(null);
      post(`${base}/messages/quote`, { body: type === 'SMS' ? { text } : { type: 'TEXT', text } })
        .then(setQuote)
        .catch(() => setQuote(null));
    }, 150);
    return () => clearTimeout(t);
  }, [text]);

  const create = useAction(async () => {
    if (!file || file.rows.length === 0) throw new Error('choose a CSV file with at least one number');
    const body = type === 'SMS' ? { text } : { type: 'TEXT', text };
    const c = await post(`${base}/campaigns`, {
      recipients: file.rows,
      body,
      ...(refClient && { refClient }),
      ...(sentDate && { sentDate: new Date(sentDate).toISOString() }),
    });
    navigate(`/campaigns/${c.campaignId}`);
  });

  return (
    <form
      class="form"
      aria-label="New campaign"
      onSubmit={(e) => {
        e.preventDefault();
        void create.run();
      }}
    >
      <h2>New campaign</h2>
      <Field
        id="csv"
        label="Recipients (CSV file)"
        hint="One number a row in the first column (or a column named number); an optional refClient column. Up to 10,000 rows."
      >
        <input
          id="csv"
          ref={fileInput}
          type="file"
          accept=".csv,text/csv,text/plain"
          onChange={(e) => {
            const f = (e.target as HTMLInputElement).files?.[0];
            setFile(null);
            setFileError(null);
            if (!f) return;
            void f.text().then((text) => {
              try {
                setFile({ name: f.name, ...recipientsOf(text) });
              } catch (err) {
                setFileError(new Error(`${f.name}: ${(err as Error).message}`));
              }
            });
          }}
        />
      </Field>
      <ErrorBox error={fileError} />
      {file ? (
        <div class="preview" aria-label="Preview">
          <p>
            <strong data-testid="csv-count">{file.rows.length}</strong> recipients in {file.name}
            {file.skipped.length ? <> · rows without a number left out: {file.skipped.slice(0, 10).join(', ')}</> : null}
          </p>
          <table>
            <caption class="sr-only">The first recipients</caption>
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Number</th>
                <th scope="col">refClient</th>
              </tr>
            </thead>
            <tbody>
              {file.rows.slice(0, 5).map((r, i) => (
                <tr>
                  <td>{i + 1}</td>
                  <td>{r.to}</td>
                  <td>{r.refClient ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <Field id="c-text" label="Text">
        <textarea id="c-text" rows={4} required value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
      </Field>
      {quote ? (
        <p class="counter" aria-live="polite">
          {quote.body ? <>{quote.body.messagePartCount} part(s) a message · </> : null}
          {euros(quote.price.amount)} a message at the default price
          {file ? (
            <>
              {' '}
              · about {euros(quote.price.amount * file.rows.length, 2)} for {file.rows.length}
            </>
          ) : null}
        </p>
      ) : null}
      <div class="row">
        <Field id="c-ref" label="refClient">
          <input id="c-ref" value={refClient} onInput={(e) => setRefClient((e.target as HTMLInputElement).value)} />
        </Field>
        <Field id="c-when" label="Send at" hint="Empty: now">
          <input id="c-when" type="datetime-local" value={sentDate} onInput={(e) => setSentDate((e.target as HTMLInputElement).value)} />
        </Field>
      </div>
      <button type="submit" disabled={create.busy || !file}>
        {create.busy ? 'Creating…' : `Send to ${file?.rows.length ?? 0} recipients`}
      </button>
      <ErrorBox error={create.error} />
    </form>
  );
}

export function Campaigns() {
  const s = useSession();
  const type = s.channel.type;
  const base = apiOf(type);
  const list = useLoad(() => (type === 'VOICE' ? Promise.resolve({ items: [] }) : get(`${base}/campaigns${query({ pageSize: 50 })}`)), []);
  if (type === 'VOICE') {
    return (
      <Page title="Campaigns">
        <Notice>Campaigns are sent on SMS and RCS channels; sign in with one of their keys.</Notice>
      </Page>
    );
  }
  return (
    <Page title="Campaigns">
      <NewCampaign base={base} type={type} />
      <h2>Campaigns</h2>
      <ErrorBox error={list.error} />
      {list.data?.items.length === 0 ? <Empty>No campaign yet.</Empty> : null}
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">Status</th>
              <th scope="col">Text</th>
              <th scope="col" class="num">
                Recipients
              </th>
              {type === 'SMS' ? (
                <th scope="col" class="num">
                  Clicks
                </th>
              ) : null}
              <th scope="col">refClient</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.items ?? []).map((c: any) => (
              <tr>
                <td>
                  <a href={`#/campaigns/${c.campaignId}`}>{when(c.creationDate)}</a>
                </td>
                <td>
                  <Status value={c.status} />
                </td>
                <td class="text">{bodyText(c.body)}</td>
                <td class="num">{c.recipients}</td>
                {type === 'SMS' ? <td class="num">{c.counts.clicks}</td> : null}
                <td>{c.refClient ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Page>
  );
}

/** Messages a page of the campaign's page lists. */
const MESSAGES_PAGE = 20;

export function CampaignDetail({ id }: { id: string }) {
  const s = useSession();
  const base = apiOf(s.channel.type);
  const c = useLoad(() => get(`${base}/campaigns/${id}`), [id]);
  const [page, setPage] = useState(1);
  const messages = useLoad(() => get(`${base}/campaigns/${id}/messages${query({ page, pageSize: MESSAGES_PAGE })}`), [id, page]);

  // Progress from the event stream: the campaign is read again at most once a second while its messages change.
  useEffect(() => {
    const key = keys().apiKey;
    if (!key) return;
    let pending: ReturnType<typeof setTimeout> | null = null;
    const later = () => {
      if (pending) return;
      pending = setTimeout(() => {
        pending = null;
        c.reload();
        messages.reload();
      }, 1000);
    };
    const stop = follow(
      key,
      (e) => e.message.campaignId === id && later(),
      (live) => live && later(),
    );
    return () => {
      stop();
      if (pending) clearTimeout(pending);
    };
  }, [id]);

  const data = c.data;
  const byStatus: Record<string, number> = data?.counts.byStatus ?? {};
  const accepted = data?.counts.accepted ?? 0;
  const settled = Object.entries(byStatus)
    .filter(([k]) => FINAL_STATUSES.includes(k))
    .reduce((n, [, v]) => n + v, 0);
  const pct = accepted ? Math.round((settled / accepted) * 100) : 0;
  return (
    <Page title="Campaign" actions={<a href="#/campaigns">All campaigns</a>}>
      <ErrorBox error={c.error} />
      {data ? (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <Status value={data.status} />
            </dd>
            <dt>Text</dt>
            <dd>{bodyText(data.body)}</dd>
            <dt>Send date</dt>
            <dd>{when(data.sentDate)}</dd>
            <dt>Recipients</dt>
            <dd>
              {data.recipients} ({accepted} accepted, {data.counts.rejected} refused)
            </dd>
            {data.counts.links > 0 || data.counts.clicks > 0 ? (
              <>
                <dt>Links</dt>
                <dd data-testid="campaign-links">
                  {data.counts.links} short links, {data.counts.clickedLinks} clicked ({data.counts.clicks} {data.counts.clicks === 1 ? 'click' : 'clicks'})
                </dd>
              </>
            ) : null}
          </dl>
          <h2>Progress</h2>
          <label for="progress">
            {settled} of {accepted} messages have a final status ({pct} %)
          </label>
          <progress id="progress" max={accepted || 1} value={settled} />
          <table class="counts" aria-label="Messages by status">
            <thead>
              <tr>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Messages
                </th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(byStatus).map(([k, v]) => (
                <tr data-status={k}>
                  <td>
                    <Status value={k} />
                  </td>
                  <td class="num">{v}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
      <h2>Messages</h2>
      <ErrorBox error={messages.error} />
      <ul class="plain" data-testid="campaign-messages">
        {(messages.data?.items ?? []).map((m: any) => (
          <li>
            <a href={`#/messages/${m.messageId}`}>{m.recipient.to}</a> <Status value={m.status?.value} detail={m.status?.detail} />
          </li>
        ))}
      </ul>
      <nav class="actions" aria-label="Pages of messages">
        <button type="button" class="secondary" disabled={page === 1} onClick={() => setPage(page - 1)}>
          Previous
        </button>
        <span data-testid="messages-page">Page {page}</span>
        <button type="button" class="secondary" disabled={(messages.data?.items.length ?? 0) < MESSAGES_PAGE} onClick={() => setPage(page + 1)}>
          Next
        </button>
        <a href={`#/messages?campaignId=${encodeURIComponent(id)}`}>In Messages, with filters</a>
      </nav>
    </Page>
  );
}

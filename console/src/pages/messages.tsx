import { useEffect, useRef, useState } from 'preact/hooks';
import { apiOf, get, keys, query } from '../api.ts';
import { bodyText, euros, when } from '../format.ts';
import { navigate } from '../router.ts';
import { useSession } from '../session.ts';
import { follow } from '../sse.ts';
import { Empty, ErrorBox, Page, Status } from '../ui.tsx';

const STATUSES = ['SCHEDULED', 'ENROUTE', 'DELIVERED', 'UNDELIVERABLE', 'UNDELIVERED', 'READ', 'CANCELLED', 'RECEIVED'];
const PAGE_SIZE = 50;

interface Filters {
  status: string;
  direction: string;
  to: string;
  refClient: string;
  startDate: string;
  endDate: string;
  campaignId: string;
}

const EMPTY: Filters = { status: '', direction: 'MT', to: '', refClient: '', startDate: '', endDate: '', campaignId: '' };

/** The filters a link gives: `#/messages?campaignId=…` lists a campaign's messages. */
function fromLink(): Filters {
  const q = new URLSearchParams(location.hash.split('?')[1] ?? '');
  const campaignId = q.get('campaignId') ?? '';
  return campaignId ? { ...EMPTY, campaignId } : EMPTY;
}

function queryOf(f: Filters, page: number): string {
  return query({
    page,
    pageSize: PAGE_SIZE,
    'searchBy[status.value]': f.status,
    'searchBy[direction]': f.direction,
    'searchBy[recipient.to]': f.to,
    'searchBy[refClient]': f.refClient,
    'searchBy[campaignId]': f.campaignId,
    startDate: f.startDate ? new Date(`${f.startDate}T00:00:00`).toISOString() : undefined,
    endDate: f.endDate ? new Date(`${f.endDate}T23:59:59.999`).toISOString() : undefined,
  });
}

/** Whether a message (new or changed) belongs in the list as filtered. */
function fits(m: any, f: Filters): boolean {
  if (f.direction && m.direction !== f.direction) return false;
  if (f.status && m.status?.value !== f.status) return false;
  if (f.refClient && m.refClient !== f.refClient) return false;
  if (f.campaignId && m.campaignId !== f.campaignId) return false;
  if (f.to && !m.recipient?.to?.includes(f.to.replace(/\D/g, ''))) return false;
  if (f.endDate) return false;
  return true;
}

export function Messages() {
  const s = useSession();
  const base = apiOf(s.channel.type);
  const [filters, setFilters] = useState<Filters>(fromLink);
  const [draft, setDraft] = useState<Filters>(fromLink);
  const [items, setItems] = useState<any[]>([]);
  const [page, setPage] = useState(1);
  const [more, setMore] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);
  const [live, setLive] = useState(false);
  const sentinel = useRef<HTMLDivElement>(null);
  const filtersRef = useRef(filters);
  filtersRef.current = filters;

  async function loadPage(f: Filters, p: number, replace: boolean) {
    setLoading(true);
    try {
      const res = await get(`${base}/messages${queryOf(f, p)}`);
      setItems((old) => {
        const list = replace ? [] : old;
        const seen = new Set(list.map((m) => m.messageId));
        return [...list, ...res.items.filter((m: any) => !seen.has(m.messageId))];
      });
      setMore(res.items.length === PAGE_SIZE);
      setPage(p);
      setError(null);
    } catch (e) {
      setError(e);
      setMore(false);
    } finally {
      setLoading(false);
    }
  }

  useEffect(() => void loadPage(filters, 1, true), [filters]);

  async function refreshFirst() {
    try {
      const res = await get(`${base}/messages${queryOf(filtersRef.current, 1)}`);
      setItems((old) => {
        const fresh = new Map(res.items.map((m: any) => [m.messageId, m]));
        const rest = old.filter((m) => !fresh.has(m.messageId));
        return [...res.items, ...rest].sort((a, b) => (a.acceptedAt < b.acceptedAt ? 1 : -1));
      });
    } catch {
      // the list stays as it is; the next event or filter reloads it
    }
  }

  // Infinite scroll: the next page when the end of the list comes into view.
  useEffect(() => {
    const el = sentinel.current;
    if (!el) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && more && !loading) void loadPage(filters, page + 1, false);
    });
    io.observe(el);
    return () => io.disconnect();
  }, [more, loading, page, filters]);

  // Live: new messages and status changes of the channel, from the event stream.
  useEffect(() => {
    const key = keys().apiKey;
    if (!key) return;
    return follow(
      key,
      (e) => {
        const m = e.message;
        if (m.type !== s.channel.type) return;
        setItems((old) => {
          const i = old.findIndex((x) => x.messageId === m.messageId);
          if (i >= 0) {
            const copy = [...old];
            copy[i] = m;
            return copy;
          }
          return fits(m, filtersRef.current) ? [m, ...old] : old;
        });
      },
      (on) => {
        setLive(on);
        // (Re)connected: the newest page again, merged, so that nothing changed while away is missed.
        if (on) void refreshFirst();
      },
    );
  }, []);

  const set = (k: keyof Filters) => (e: Event) => setDraft({ ...draft, [k]: (e.target as HTMLInputElement).value });

  return (
    <Page
      title="Messages"
      actions={
        <>
          <span class={live ? 'live on' : 'live'} aria-live="polite">
            {live ? 'Live' : 'Connecting…'}
          </span>
          <a class="button" href="#/send">
            Send a message
          </a>
        </>
      }
    >
      <form
        class="filters"
        aria-label="Filters"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters(draft);
        }}
      >
        <div class="field">
          <label for="f-status">Status</label>
          <select id="f-status" value={draft.status} onChange={set('status')}>
            <option value="">Any</option>
            {STATUSES.map((v) => (
              <option value={v}>{v}</option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="f-direction">Direction</label>
          <select id="f-direction" value={draft.direction} onChange={set('direction')}>
            <option value="MT">Sent (MT)</option>
            <option value="MO">Received (MO)</option>
          </select>
        </div>
        <div class="field">
          <label for="f-to">Number</label>
          <input id="f-to" inputMode="tel" value={draft.to} onInput={set('to')} placeholder="33612345678" />
        </div>
        <div class="field">
          <label for="f-ref">refClient</label>
          <input id="f-ref" value={draft.refClient} onInput={set('refClient')} />
        </div>
        <div class="field">
          <label for="f-campaign">Campaign</label>
          <input id="f-campaign" value={draft.campaignId} onInput={set('campaignId')} placeholder="Campaign ID" />
        </div>
        <div class="field">
          <label for="f-from">From date</label>
          <input id="f-from" type="date" value={draft.startDate} onInput={set('startDate')} />
        </div>
        <div class="field">
          <label for="f-until">To date</label>
          <input id="f-until" type="date" value={draft.endDate} onInput={set('endDate')} />
        </div>
        <div class="field buttons">
          <button type="submit">Filter</button>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setDraft(EMPTY);
              setFilters(EMPTY);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      <p class="hint">Without dates, the last 10 days are shown.</p>
      <ErrorBox error={error} />
      <div class="table-wrap">
        <table class="messages">
          <caption class="sr-only">Messages, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Date</th>
              <th scope="col">{filters.direction === 'MO' ? 'From' : 'To'}</th>
              <th scope="col" class="opt">
                Text
              </th>
              <th scope="col">Status</th>
              <th scope="col" class="num opt">
                Price
              </th>
              <th scope="col" class="opt">
                refClient
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((m) => (
              <tr key={m.messageId} data-message-id={m.messageId} onClick={() => navigate(`/messages/${m.messageId}`)}>
                <td>{when(m.acceptedAt)}</td>
                <td>
                  <a href={`#/messages/${m.messageId}`}>{m.direction === 'MO' ? m.from : m.recipient?.to}</a>
                </td>
                <td class="text opt">{bodyText(m.body)}</td>
                <td>
                  <Status value={m.status?.value ?? (m.direction === 'MO' ? 'RECEIVED' : undefined)} detail={m.status?.detail} />
                  {m.status?.value === 'SCHEDULED' && m.sentDate ? (
                    <small class="goes">
                      {' '}
                      {m.deferredUntil ? 'deferred to the window:' : 'goes'} <time dateTime={m.sentDate}>{when(m.sentDate)}</time>
                    </small>
                  ) : null}
                </td>
                <td class="num opt">{m.price ? euros(m.price.amount) : '—'}</td>
                <td class="opt">{m.refClient ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {!loading && items.length === 0 && !error ? <Empty>No messages match. Send one from the Send page.</Empty> : null}
      <div ref={sentinel} class="sentinel" aria-hidden="true" />
      {loading ? <p class="loading">Loading…</p> : null}
    </Page>
  );
}

import { useEffect, useState } from 'preact/hooks';
import { apiOf, call, get, keys, post, query } from '../api.ts';
import { euros, when } from '../format.ts';
import { useSession } from '../session.ts';
import { follow } from '../sse.ts';
import { Copy, Empty, ErrorBox, Page, Status, useAction, useLoad } from '../ui.tsx';
import { Attempts, useAttempts } from './routing.tsx';

function Delivery({ d, onReplayed }: { d: any; onReplayed: () => void }) {
  const replay = useAction(async () => {
    await post(`/commons/v1/webhooks/deliveries/${d.deliveryId}/replay`);
    // The new attempt is recorded once the receiver answers: this one delivery is read again until it shows.
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setTimeout(r, 250));
      const now = await get(`/commons/v1/webhooks/deliveries/${d.deliveryId}`);
      if ((now.attempts?.length ?? 0) > (d.attempts?.length ?? 0) && now.status !== 'PENDING') break;
    }
    onReplayed();
  });
  let body = d.payload as string | undefined;
  try {
    if (body) body = JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    // not JSON (a legacy GET callback): shown as it is
  }
  return (
    <article class="delivery" data-delivery-id={d.deliveryId}>
      <header>
        <Status value={d.status} />
        <code class="method">{d.method}</code> <span class="url">{d.url}</span>
        <span class="kind">{d.kind}</span>
        <button type="button" class="small" onClick={() => void replay.run()} disabled={replay.busy}>
          {replay.busy ? 'Replaying…' : 'Replay'}
        </button>
      </header>
      <ErrorBox error={replay.error} />
      <details>
        <summary>Request</summary>
        <p>
          <code>webhook-id: {d.deliveryId}</code>
        </p>
        {body ? <pre>{body}</pre> : <p>No body.</p>}
      </details>
      <table class="attempts">
        <caption>
          Responses: {d.attempts?.length ?? 0} attempt{d.attempts?.length === 1 ? '' : 's'}
        </caption>
        <thead>
          <tr>
            <th scope="col">Date</th>
            <th scope="col">Outcome</th>
            <th scope="col">HTTP status</th>
            <th scope="col" class="num">
              Latency
            </th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {(d.attempts ?? []).map((a: any) => (
            <tr>
              <td>{when(a.date)}</td>
              <td>{a.outcome}</td>
              <td>{a.httpStatus ?? '—'}</td>
              <td class="num">{a.latencyMs} ms</td>
              <td>{a.error ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {d.status === 'PENDING' && d.nextAttemptDate ? <p class="hint">Next attempt {when(d.nextAttemptDate)}</p> : null}
    </article>
  );
}

function Audio({ base, id }: { base: string; id: string }) {
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let made: string | null = null;
    fetch(`${base}/messages/${id}/audio`, { headers: { 'x-api-key': keys().apiKey ?? '' } })
      .then(async (r) => {
        if (!r.ok) throw new Error(`the recording is not available (${r.status})`);
        made = URL.createObjectURL(await r.blob());
        setUrl(made);
      })
      .catch(setError);
    return () => void (made && URL.revokeObjectURL(made));
  }, [id]);
  if (error) return <p class="hint">{String((error as Error).message)}</p>;
  return url ? <audio controls src={url} aria-label="Recording of the call" /> : null;
}

/** The message's short links and their clicks (read again when its timeline changes: a click adds a CLICK event). */
function Links({ id, refresh }: { id: string; refresh: unknown }) {
  const links = useLoad(() => get(`/sms/v1/messages/${id}/links`), [id, refresh]);
  const items: any[] = links.data?.items ?? [];
  if (!links.error && items.length === 0) return null;
  return (
    <>
      <h2>Links</h2>
      <ErrorBox error={links.error} />
      <p class="hint" data-testid="links-summary">
        {items.length} short {items.length === 1 ? 'link' : 'links'}, {items.filter((l) => l.clicks > 0).length} clicked
      </p>
      <div class="table-wrap">
        <table class="links">
          <thead>
            <tr>
              <th scope="col">Code</th>
              <th scope="col">Goes to</th>
              <th scope="col" class="num">
                Clicks
              </th>
              <th scope="col">Last click</th>
              <th scope="col">Expires</th>
            </tr>
          </thead>
          <tbody>
            {items.map((l) => (
              <tr data-code={l.code}>
                <td>
                  <code>{l.code}</code>
                </td>
                <td class="url">{l.url}</td>
                <td class="num">{l.clicks}</td>
                <td>{l.lastClickDate ? when(l.lastClickDate) : '—'}</td>
                <td>{when(l.expirationDate)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

export function MessageDetail({ id }: { id: string }) {
  const s = useSession();
  const base = apiOf(s.channel.type);
  const msg = useLoad(() => get(`${base}/messages/${id}`), [id]);
  const events = useLoad(() => get(`${base}/messages/${id}/events`), [id]);
  const deliveries = useLoad(
    () => get(`/commons/v1/webhooks/deliveries${query({ 'searchBy[messageId]': id, pageSize: 100 })}`).catch(() => ({ items: [], hidden: true })),
    [id],
  );
  // The operator (signed in with its key too) sees where the message was placed; the organisation never does.
  const attempts = useAttempts(id, s.operator, events.data);
  const cancel = useAction(async () => {
    await call('DELETE', `${base}/messages/${id}`);
    msg.reload();
    events.reload();
  });

  useEffect(() => {
    const key = keys().apiKey;
    if (!key) return;
    const refresh = () => {
      msg.reload();
      events.reload();
      // Its webhook deliveries are written with the event and sent soon after.
      setTimeout(deliveries.reload, 300);
    };
    return follow(
      key,
      (e) => {
        if (e.message.messageId === id) refresh();
      },
      (live) => live && refresh(),
    );
  }, [id]);

  const m = msg.data;
  return (
    <Page title="Message" actions={<a href="#/messages">All messages</a>}>
      <ErrorBox error={msg.error} />
      {m ? (
        <div class="grid2">
          <dl class="facts">
            <dt>Message id</dt>
            <dd>
              <code>{m.messageId}</code> <Copy text={m.messageId} />
            </dd>
            <dt>Status</dt>
            <dd>
              <Status value={m.status?.value ?? (m.direction === 'MO' ? 'RECEIVED' : undefined)} detail={m.status?.detail} />
            </dd>
            <dt>{m.direction === 'MO' ? 'From' : 'To'}</dt>
            <dd>{m.direction === 'MO' ? m.from : m.recipient.to}</dd>
            {m.direction === 'MT' && m.from ? (
              <>
                <dt>Sender</dt>
                <dd>{m.from}</dd>
              </>
            ) : null}
            <dt>Type</dt>
            <dd>
              {m.type} {m.direction}
            </dd>
            <dt>Price</dt>
            <dd>{m.price ? `${euros(m.price.amount)}${m.price.kind ? ` (${m.price.kind})` : ''}` : '—'}</dd>
            {m.body?.messagePartCount ? (
              <>
                <dt>Parts</dt>
                <dd>
                  {m.body.messagePartCount} ({m.body.encoding}, {m.body.length} units)
                </dd>
              </>
            ) : null}
            <dt>Accepted</dt>
            <dd>{when(m.acceptedAt)}</dd>
            <dt>Send date</dt>
            <dd>{when(m.sentDate)}</dd>
            {m.deferredUntil ? (
              <>
                <dt>Deferred</dt>
                <dd data-testid="deferred">
                  outside the organisation's sending window: goes at <time dateTime={m.deferredUntil}>{when(m.deferredUntil)}</time>
                </dd>
              </>
            ) : null}
            {m.windowOverride ? (
              <>
                <dt>Window</dt>
                <dd>sent outside the sending window by the operator's override</dd>
              </>
            ) : null}
            {m.refClient ? (
              <>
                <dt>refClient</dt>
                <dd>{m.refClient}</dd>
              </>
            ) : null}
            {m.campaignId ? (
              <>
                <dt>Campaign</dt>
                <dd>
                  <a href={`#/campaigns/${m.campaignId}`}>{m.campaignId}</a>
                </dd>
              </>
            ) : null}
            {m.status?.lookup ? (
              <>
                <dt>Network</dt>
                <dd>{[m.status.lookup.network, m.status.lookup.country, m.status.lookup.mccMnc].filter(Boolean).join(' · ')}</dd>
              </>
            ) : null}
          </dl>
          <div>
            <h2>Body</h2>
            {typeof m.body?.text === 'string' ? <p class="body-text">{m.body.text}</p> : <pre>{JSON.stringify(m.body, null, 2)}</pre>}
            {m.type === 'VOICE' && m.direction === 'MT' ? <Audio base={base} id={m.messageId} /> : null}
            {m.status?.value === 'SCHEDULED' ? (
              <p>
                <button type="button" class="danger" onClick={() => void cancel.run()} disabled={cancel.busy}>
                  Cancel this message
                </button>
                <ErrorBox error={cancel.error} />
              </p>
            ) : null}
          </div>
        </div>
      ) : null}
      {m && m.type === 'SMS' && m.direction === 'MT' ? <Links id={id} refresh={events.data} /> : null}
      <h2>Timeline</h2>
      <ErrorBox error={events.error} />
      <ol class="timeline" aria-label="Status events">
        {[
          ...(events.data?.items ?? []).map((e: any) => ({
            date: e.date as string,
            item: (
              <li data-status={e.status}>
                <time dateTime={e.date}>{when(e.date)}</time> <Status value={e.status} detail={e.detail} />
              </li>
            ),
          })),
          ...(attempts.data?.items ?? []).map((a: any) => ({
            date: a.placedAt as string,
            item: (
              <li class="placement" data-placement={a.attempt}>
                <time dateTime={a.placedAt}>{when(a.placedAt)}</time> placed with <strong>{a.connector}</strong> by route {a.route}
                {a.cost === undefined ? '' : `, ${euros(a.cost.amount, 6)}`}
                {a.outcome ? ` → ${a.outcome}` : ''}
              </li>
            ),
          })),
        ]
          .sort((x, y) => (x.date < y.date ? -1 : x.date > y.date ? 1 : 0))
          .map((x) => x.item)}
      </ol>
      {s.operator ? <Attempts list={attempts} /> : null}
      <h2>Webhook deliveries</h2>
      {deliveries.data?.hidden ? <p class="hint">This key's roles do not read webhook deliveries.</p> : null}
      {deliveries.data && !deliveries.data.hidden && deliveries.data.items.length === 0 ? (
        <Empty>No webhook for this message: set a callback URL on the Webhooks page or in the send.</Empty>
      ) : null}
      {(deliveries.data?.items ?? []).map((d: any) => (
        <Delivery d={d} onReplayed={deliveries.reload} />
      ))}
    </Page>
  );
}

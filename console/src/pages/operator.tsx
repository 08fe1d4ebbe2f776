import { useState } from 'preact/hooks';
import { call, get, post, query } from '../api.ts';
import { euros, when } from '../format.ts';
import { Copy, Empty, ErrorBox, Field, Notice, Page, Status, useAction, useLoad } from '../ui.tsx';
import { Rates } from './routing.tsx';
import { SendingWindow } from './sending-window.tsx';

const admin = { admin: true };

function OrganisationRow({ o, onChange }: { o: any; onChange: () => void }) {
  const [open, setOpen] = useState(false);
  const [amount, setAmount] = useState('');
  const channels = useLoad(() => (open ? get(`/admin/v1/organisations/${o.organisationId}/channels`, admin) : Promise.resolve({ items: [] })), [open]);
  const [newKey, setNewKey] = useState<any>(null);
  const credit = useAction(async () => {
    await post(`/admin/v1/organisations/${o.organisationId}/credit`, { amount, reference: 'console top-up' }, admin);
    setAmount('');
    onChange();
  });
  const key = useAction(async (channelId: string) =>
    setNewKey(await post(`/admin/v1/channels/${channelId}/credentials`, { name: 'Console key', roles: ['ADMIN'] }, admin)),
  );
  return (
    <>
      <tr>
        <td>
          <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
            {o.name}
          </button>
        </td>
        <td>{o.state}</td>
        <td class="num">{euros(o.balance.amount, 2)}</td>
        <td>{o.defaultCountry ?? '—'}</td>
        <td>{when(o.creationDate)}</td>
      </tr>
      {open ? (
        <tr class="expanded">
          <td colSpan={5}>
            <form
              class="row"
              aria-label={`Top up ${o.name}`}
              onSubmit={(e) => {
                e.preventDefault();
                void credit.run();
              }}
            >
              <Field id={`c-${o.organisationId}`} label="Top up (€)">
                <input
                  id={`c-${o.organisationId}`}
                  inputMode="decimal"
                  required
                  value={amount}
                  onInput={(e) => setAmount((e.target as HTMLInputElement).value)}
                />
              </Field>
              <div class="field buttons">
                <button type="submit">Credit</button>
              </div>
            </form>
            <ErrorBox error={credit.error ?? key.error ?? channels.error} />
            <ul class="plain">
              {(channels.data?.items ?? []).map((c: any) => (
                <li>
                  {c.type} channel <strong>{c.name}</strong> ({c.flow}) <code>{c.channelId}</code>{' '}
                  <button type="button" class="small" onClick={() => void key.run(c.channelId)}>
                    New ADMIN key
                  </button>
                </li>
              ))}
            </ul>
            {newKey ? (
              <Notice>
                New key for {newKey.channel.name}: <code>{newKey.value}</code> <Copy text={newKey.value} />
              </Notice>
            ) : null}
            <SendingWindow organisationId={o.organisationId} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

export function Organisations() {
  const [page, setPage] = useState(1);
  const list = useLoad(() => get(`/admin/v1/organisations${query({ page, pageSize: 50 })}`, admin), [page]);
  const [name, setName] = useState('');
  const [country, setCountry] = useState('FR');
  const [channelType, setChannelType] = useState('SMS');
  const create = useAction(async () => {
    const o = await post('/admin/v1/organisations', { name, ...(country && { defaultCountry: country }) }, admin);
    await post(`/admin/v1/organisations/${o.organisationId}/channels`, { name: `${name} ${channelType}`, type: channelType, flow: 'TRANSACTIONAL' }, admin);
    setName('');
    list.reload();
  });
  return (
    <Page title="Organisations">
      <form
        class="row"
        aria-label="New organisation"
        onSubmit={(e) => {
          e.preventDefault();
          void create.run();
        }}
      >
        <Field id="o-name" label="Name">
          <input id="o-name" required maxLength={200} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </Field>
        <Field id="o-country" label="Default country">
          <input id="o-country" maxLength={2} value={country} onInput={(e) => setCountry((e.target as HTMLInputElement).value.toUpperCase())} />
        </Field>
        <Field id="o-type" label="First channel">
          <select id="o-type" value={channelType} onChange={(e) => setChannelType((e.target as HTMLSelectElement).value)}>
            <option>SMS</option>
            <option>RCS</option>
            <option>VOICE</option>
          </select>
        </Field>
        <div class="field buttons">
          <button type="submit" disabled={create.busy}>
            Create
          </button>
        </div>
      </form>
      <ErrorBox error={create.error ?? list.error} />
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">State</th>
              <th scope="col" class="num">
                Balance
              </th>
              <th scope="col">Country</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.items ?? []).map((o: any) => (
              <OrganisationRow key={o.organisationId} o={o} onChange={list.reload} />
            ))}
          </tbody>
        </table>
      </div>
      <p class="actions">
        {page > 1 ? (
          <button type="button" class="secondary" onClick={() => setPage(page - 1)}>
            Previous
          </button>
        ) : null}
        {list.data?.items.length === 50 ? (
          <button type="button" class="secondary" onClick={() => setPage(page + 1)}>
            Next
          </button>
        ) : null}
      </p>
    </Page>
  );
}

export function Prices() {
  const list = useLoad(() => get('/admin/v1/prices', admin), []);
  const [entry, setEntry] = useState({ channelType: 'SMS', country: '*', kind: '', amount: '' });
  const save = useAction(async () => {
    await call('PUT', '/admin/v1/prices', {
      admin: true,
      body: { items: [{ channelType: entry.channelType, country: entry.country, ...(entry.kind && { kind: entry.kind }), amount: entry.amount }] },
    });
    list.reload();
  });
  const set = (k: keyof typeof entry) => (e: Event) => setEntry({ ...entry, [k]: (e.target as HTMLInputElement).value });
  return (
    <Page title="Prices">
      <form
        class="row"
        aria-label="Set a price"
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <Field id="p-type" label="Channel type">
          <select id="p-type" value={entry.channelType} onChange={set('channelType')}>
            <option>SMS</option>
            <option>RCS</option>
            <option>VOICE</option>
            <option>LOOKUP</option>
          </select>
        </Field>
        <Field id="p-country" label="Country (or *)">
          <input id="p-country" required maxLength={2} value={entry.country} onInput={set('country')} />
        </Field>
        <Field id="p-kind" label="Kind (RCS: BASIC, SINGLE, CONVERSATION)">
          <input id="p-kind" value={entry.kind} onInput={set('kind')} />
        </Field>
        <Field id="p-amount" label="Price a unit (€)">
          <input id="p-amount" inputMode="decimal" required value={entry.amount} onInput={set('amount')} />
        </Field>
        <div class="field buttons">
          <button type="submit">Set price</button>
        </div>
      </form>
      <ErrorBox error={save.error ?? list.error} />
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Type</th>
              <th scope="col">Country</th>
              <th scope="col">Kind</th>
              <th scope="col" class="num">
                Price a unit
              </th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.items ?? []).map((p: any) => (
              <tr>
                <td>{p.channelType}</td>
                <td>{p.country}</td>
                <td>{p.kind}</td>
                <td class="num">{euros(p.amount, 6)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Page>
  );
}

function ConnectorRow({ c }: { c: any }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <tr>
        <td>
          <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
            {c.name}
          </button>
        </td>
        <td>{c.type}</td>
        <td>
          <Status value={c.live.state} />
          {c.live.since ? <span class="hint"> since {when(c.live.since)}</span> : null}
        </td>
        <td class="num">{c.live.submitsPerSecond}</td>
        <td class="num">{c.live.submitted}</td>
        <td class="num">{c.live.receipts}</td>
        <td class="text">{c.live.lastError ?? ''}</td>
      </tr>
      {open ? (
        <tr class="expanded">
          <td colSpan={7}>
            <Rates connectorId={c.connectorId} name={c.name} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

export function Connectors() {
  const connectors = useLoad(() => get('/admin/v1/connectors', admin), []);
  const routes = useLoad(() => get('/admin/v1/routes', admin), []);
  return (
    <Page
      title="Connectors"
      actions={
        <button
          type="button"
          class="secondary"
          onClick={() => {
            connectors.reload();
            routes.reload();
          }}
        >
          Refresh
        </button>
      }
    >
      <ErrorBox error={connectors.error ?? routes.error} />
      <div class="table-wrap">
        <table>
          <caption>Operator connections, as the node serving this page sees them</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Health</th>
              <th scope="col" class="num">
                Submits/s
              </th>
              <th scope="col" class="num">
                Submitted
              </th>
              <th scope="col" class="num">
                Receipts
              </th>
              <th scope="col">Last error</th>
            </tr>
          </thead>
          <tbody>
            {(connectors.data?.items ?? []).map((c: any) => (
              <ConnectorRow key={c.connectorId} c={c} />
            ))}
          </tbody>
        </table>
      </div>
      <h2>Routes</h2>
      {routes.data?.items.length === 0 ? <Empty>No route.</Empty> : null}
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Priority</th>
              <th scope="col">Name</th>
              <th scope="col">Match</th>
              <th scope="col">Connectors</th>
              <th scope="col">Failover</th>
              <th scope="col">Strategy</th>
              <th scope="col">At a loss</th>
              <th scope="col" class="num">
                Max attempts
              </th>
              <th scope="col" class="num">
                Min delivery rate
              </th>
              <th scope="col">Enabled</th>
            </tr>
          </thead>
          <tbody>
            {(routes.data?.items ?? []).map((r: any) => (
              <tr>
                <td>{r.priority}</td>
                <td>{r.name}</td>
                <td>
                  <code>{JSON.stringify(r.match)}</code>
                </td>
                <td>{r.connectors.map((c: any) => `${c.name ?? c.connectorId} ×${c.weight}`).join(', ')}</td>
                <td>{r.failover.map((c: any) => c.name ?? c.connectorId).join(' → ') || '—'}</td>
                <td data-field="strategy">{r.strategy}</td>
                <td data-field="allowLoss">{r.allowLoss ? 'allowed' : 'never'}</td>
                <td class="num" data-field="maxAttempts">
                  {r.maxAttempts}
                </td>
                <td class="num" data-field="minDeliveryRate">
                  {r.minDeliveryRate === undefined ? '—' : `${(r.minDeliveryRate * 100).toFixed(0)} %`}
                </td>
                <td>{r.enabled ? 'yes' : 'no'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Page>
  );
}

const UNROUTED_PAGE = 20;

export function Simulator() {
  const [from, setFrom] = useState('33612345678');
  const [to, setTo] = useState('');
  const [text, setText] = useState('');
  const [done, setDone] = useState(false);
  const [page, setPage] = useState(1);
  const unrouted = useLoad(() => get(`/admin/v1/inbound/unrouted${query({ page, pageSize: UNROUTED_PAGE })}`, admin), [page]);
  const inject = useAction(async () => {
    setDone(false);
    await post('/admin/v1/simulator/mo', { from, to, text }, admin);
    setDone(true);
    unrouted.reload();
  });
  return (
    <Page title="Simulator">
      <form
        class="form"
        aria-label="Inject an inbound SMS"
        onSubmit={(e) => {
          e.preventDefault();
          void inject.run();
        }}
      >
        <h2>Inject an inbound SMS (MO)</h2>
        <p class="hint">The simulated network delivers it to the channel whose sender list (or default sender) holds the destination.</p>
        <Field id="mo-from" label="From (the handset)">
          <input id="mo-from" inputMode="tel" required value={from} onInput={(e) => setFrom((e.target as HTMLInputElement).value)} />
        </Field>
        <Field id="mo-to" label="To (a channel's number or short code)">
          <input id="mo-to" required value={to} onInput={(e) => setTo((e.target as HTMLInputElement).value)} />
        </Field>
        <Field id="mo-text" label="Text">
          <textarea id="mo-text" rows={3} required value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
        </Field>
        <button type="submit" disabled={inject.busy}>
          Inject
        </button>
        <ErrorBox error={inject.error} />
        {done ? <Notice>Injected: it shows under Messages, direction MO, of the channel it reached, or below if it reached none.</Notice> : null}
      </form>
      <h2>Unrouted inbound messages</h2>
      <p class="hint">Inbound messages, from every connector, whose destination is no channel's number or sender: newest first.</p>
      <ErrorBox error={unrouted.error} />
      {unrouted.data?.items.length === 0 ? <Empty>None.</Empty> : null}
      <div class="table-wrap">
        <table aria-label="Unrouted inbound messages">
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">To</th>
              <th scope="col">From</th>
              <th scope="col">Text</th>
              <th scope="col" class="opt">
                Connector
              </th>
            </tr>
          </thead>
          <tbody>
            {(unrouted.data?.items ?? []).map((m: any) => (
              <tr key={m.id} data-unrouted-id={m.id}>
                <td>{when(m.receivedAt)}</td>
                <td>{m.to}</td>
                <td>{m.from}</td>
                <td class="text">{typeof m.body.text === 'string' ? m.body.text : JSON.stringify(m.body)}</td>
                <td class="opt">{m.connector}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <nav class="actions" aria-label="Pages of unrouted messages">
        <button type="button" class="secondary" disabled={page === 1} onClick={() => setPage(page - 1)}>
          Previous
        </button>
        <span>Page {page}</span>
        <button type="button" class="secondary" disabled={(unrouted.data?.items.length ?? 0) < UNROUTED_PAGE} onClick={() => setPage(page + 1)}>
          Next
        </button>
      </nav>
    </Page>
  );
}

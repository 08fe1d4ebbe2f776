import { useState } from 'preact/hooks';
import { call, get, query } from '../api.ts';
import { download, euros, when } from '../format.ts';
import { Empty, ErrorBox, Field, Page, useAction, useLoad } from '../ui.tsx';

const admin = { admin: true };

const isoDay = (d: Date) => d.toISOString().slice(0, 10);

/** Organisation names by id, from the first pages of the list (an id stands for itself beyond them). */
function useOrganisationNames(): Map<string, string> {
  const orgs = useLoad(() => get(`/admin/v1/organisations${query({ page: 1, pageSize: 100 })}`, admin).catch(() => ({ items: [] })), []);
  return new Map((orgs.data?.items ?? []).map((o: any) => [o.organisationId, o.name]));
}

/**
 * What each organisation's traffic was charged, what it cost through each connector, and the margin; messages whose
 * cost is not known apart, not counted as free.
 */
export function Margins() {
  const today = new Date();
  const [form, setForm] = useState({ period: 'day', startDate: `${isoDay(today).slice(0, 7)}-01`, endDate: isoDay(today), connector: '', country: '' });
  const [shown, setShown] = useState(form);
  const names = useOrganisationNames();
  const params = (f: typeof form) => ({
    period: f.period,
    startDate: f.startDate,
    endDate: f.endDate,
    'searchBy[connector]': f.connector,
    'searchBy[country]': f.country.toUpperCase(),
  });
  const report = useLoad(() => get(`/admin/v1/consumptions/margins${query(params(shown))}`, admin), [shown]);
  // The key travels in a header only, so the CSV is fetched and then saved, not linked.
  const csv = useAction(async () => {
    const text = await call<string>('GET', `/admin/v1/consumptions/margins${query({ ...params(shown), format: 'csv' })}`, {
      admin: true,
      headers: { accept: 'text/csv' },
    });
    download(`tern-margins-${shown.period}-${shown.startDate}-${shown.endDate}.csv`, text);
  });
  const set = (k: keyof typeof form) => (e: Event) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value });
  const items: any[] = report.data?.items ?? [];
  const t = report.data?.totals;
  return (
    <Page
      title="Margins"
      actions={
        <button type="button" class="secondary" onClick={() => void csv.run()} disabled={csv.busy || items.length === 0}>
          Export CSV
        </button>
      }
    >
      <form
        class="row"
        aria-label="Margins report"
        onSubmit={(e) => {
          e.preventDefault();
          setShown(form);
        }}
      >
        <Field id="m-period" label="Period">
          <select id="m-period" value={form.period} onChange={set('period')}>
            <option value="day">day</option>
            <option value="month">month</option>
            <option value="none">whole range</option>
          </select>
        </Field>
        <Field id="m-start" label="From">
          <input id="m-start" type="date" required value={form.startDate} onInput={set('startDate')} />
        </Field>
        <Field id="m-end" label="To">
          <input id="m-end" type="date" required value={form.endDate} onInput={set('endDate')} />
        </Field>
        <Field id="m-connector" label="Connector">
          <input id="m-connector" value={form.connector} onInput={set('connector')} />
        </Field>
        <Field id="m-country" label="Country">
          <input id="m-country" maxLength={2} value={form.country} onInput={set('country')} />
        </Field>
        <div class="field buttons">
          <button type="submit">Show</button>
        </div>
      </form>
      <ErrorBox error={report.error ?? csv.error} />
      {report.data && items.length === 0 ? <Empty>Nothing placed with an operator over these dates.</Empty> : null}
      <div class="table-wrap">
        <table class="margins">
          <caption>
            Charged to organisations and paid to operators, {report.data?.startDate ?? shown.startDate} to {report.data?.endDate ?? shown.endDate}
          </caption>
          <thead>
            <tr>
              <th scope="col">Period</th>
              <th scope="col">Organisation</th>
              <th scope="col">Connector</th>
              <th scope="col">Country</th>
              <th scope="col" class="num">
                Messages
              </th>
              <th scope="col" class="num">
                Parts
              </th>
              <th scope="col" class="num">
                Charged
              </th>
              <th scope="col" class="num">
                Cost
              </th>
              <th scope="col" class="num">
                Margin
              </th>
              <th scope="col" class="num" title="Messages whose cost is not known (no rate in force), and what they were charged: not in cost nor margin">
                Cost unknown
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((i) => (
              <tr data-organisation={i.organisationId} data-connector={i.connector} data-country={i.country}>
                <td>{i.period ?? '—'}</td>
                <td>{names.get(i.organisationId) ?? i.organisationId}</td>
                <td>{i.connector}</td>
                <td>{i.country || '—'}</td>
                <td class="num">{i.messages}</td>
                <td class="num">{i.parts}</td>
                <td class="num">{euros(i.charged.amount, 6)}</td>
                <td class="num">{euros(i.cost.amount, 6)}</td>
                <td class={`num${i.margin.amount < 0 ? ' loss' : ''}`}>{euros(i.margin.amount, 6)}</td>
                <UnknownCost of={i} />
              </tr>
            ))}
          </tbody>
          {t && items.length > 0 ? (
            <tfoot>
              <tr data-testid="margin-totals">
                <th scope="row" colSpan={4}>
                  Totals
                </th>
                <td class="num">{t.messages}</td>
                <td class="num">{t.parts}</td>
                <td class="num">{euros(t.charged.amount, 6)}</td>
                <td class="num">{euros(t.cost.amount, 6)}</td>
                <td class={`num${t.margin.amount < 0 ? ' loss' : ''}`}>{euros(t.margin.amount, 6)}</td>
                <UnknownCost of={t} />
              </tr>
            </tfoot>
          ) : null}
        </table>
      </div>
    </Page>
  );
}

/** Messages of a row whose cost is not known, and what they were charged: left out of its cost and margin. */
function UnknownCost({ of }: { of: { messagesUnknownCost: number; chargedUnknownCost: { amount: number } } }) {
  return (
    <td class="num" data-unknown-cost={of.messagesUnknownCost}>
      {of.messagesUnknownCost === 0 ? '—' : `${of.messagesUnknownCost} (${euros(of.chargedUnknownCost.amount, 6)} charged)`}
    </td>
  );
}

/** Delivery rate and time to DELIVERED per connector and destination network, from final receipts. */
export function Quality() {
  const [hours, setHours] = useState('24');
  const [shown, setShown] = useState('24');
  const q = useLoad(() => get(`/admin/v1/quality${query({ hours: shown })}`, admin), [shown]);
  const items: any[] = q.data?.items ?? [];
  return (
    <Page
      title="Quality"
      actions={
        <button type="button" class="secondary" onClick={q.reload}>
          Refresh
        </button>
      }
    >
      <form
        class="row"
        aria-label="Quality over"
        onSubmit={(e) => {
          e.preventDefault();
          setShown(hours);
        }}
      >
        <Field id="q-hours" label="Last hours (1 to 168)">
          <input id="q-hours" type="number" min={1} max={168} required value={hours} onInput={(e) => setHours((e.target as HTMLInputElement).value)} />
        </Field>
        <div class="field buttons">
          <button type="submit">Show</button>
        </div>
      </form>
      <ErrorBox error={q.error} />
      {q.data && items.length === 0 ? <Empty>No final receipt over the last {q.data.hours} hours.</Empty> : null}
      <div class="table-wrap">
        <table class="quality">
          <caption>Final receipts per connector and destination network (MCC/MNC, else the country); UNDELIVERABLE, the number's doing, is not counted</caption>
          <thead>
            <tr>
              <th scope="col">Connector</th>
              <th scope="col">Network</th>
              <th scope="col" class="num">
                Delivered
              </th>
              <th scope="col" class="num">
                Failed
              </th>
              <th scope="col" class="num">
                Delivery rate
              </th>
              <th scope="col" class="num">
                Time to DELIVERED
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((i) => (
              <tr data-connector={i.connector} data-network={i.network}>
                <td>{i.connector}</td>
                <td>{i.network}</td>
                <td class="num">{i.delivered}</td>
                <td class="num">{i.failed}</td>
                <td class="num">{i.deliveryRate === undefined ? '—' : `${(i.deliveryRate * 100).toFixed(1)} %`}</td>
                <td class="num">{i.meanSecondsToDelivered === undefined ? '—' : `${i.meanSecondsToDelivered.toFixed(2)} s`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Page>
  );
}

/** A message's placements with operators, for the operator only: connector, route, network, cost and outcome. */
export function useAttempts(id: string, operator: boolean, refresh: unknown) {
  return useLoad(() => (operator ? get(`/admin/v1/messages/${id}/attempts`, admin) : Promise.resolve(null)), [id, operator, refresh]);
}

export function Attempts({ list }: { list: ReturnType<typeof useAttempts> }) {
  const items: any[] = list.data?.items ?? [];
  return (
    <>
      <h2>Placements with operators</h2>
      <p class="hint">Seen with the operator key only: the organisation sees neither connectors nor costs.</p>
      <ErrorBox error={list.error} />
      {list.data && items.length === 0 ? <Empty>Not placed with an operator.</Empty> : null}
      {items.length > 0 ? (
        <div class="table-wrap">
          <table class="placements">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Placed</th>
                <th scope="col">Connector</th>
                <th scope="col">Route</th>
                <th scope="col">Network</th>
                <th scope="col" class="num">
                  Cost
                </th>
                <th scope="col">Outcome</th>
                <th scope="col">Ended</th>
              </tr>
            </thead>
            <tbody>
              {items.map((a) => (
                <tr data-attempt={a.attempt}>
                  <td>{a.attempt}</td>
                  <td>{when(a.placedAt)}</td>
                  <td>{a.connector}</td>
                  <td>{a.route}</td>
                  <td>{a.network ?? '—'}</td>
                  <td class="num">{a.cost === undefined ? 'not known' : euros(a.cost.amount, 6)}</td>
                  <td>{a.outcome ? `${a.outcome}${a.detail ? ` (${a.detail})` : ''}` : 'awaiting a receipt'}</td>
                  <td>{when(a.endedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

/** A connector's rate table, and an operator's price list (CSV) imported into it, all or none. */
export function Rates({ connectorId, name }: { connectorId: string; name: string }) {
  const list = useLoad(() => get(`/admin/v1/connectors/${connectorId}/rates`, admin), [connectorId]);
  const [csv, setCsv] = useState('');
  const [imported, setImported] = useState<number | null>(null);
  const upload = useAction(async () => {
    setImported(null);
    const res = await call('POST', `/admin/v1/connectors/${connectorId}/rates/import`, { admin: true, body: { csv } });
    setImported(res.count);
    setCsv('');
    list.reload();
  });
  // A rate not in force yet may be withdrawn; one in force or past stays (costs were recorded with it).
  const withdraw = useAction(async (r: any) => {
    if (!confirm(`Withdraw the rate of ${euros(r.price, 6)} a part from ${when(r.validFrom)}? It will not come into force.`)) return;
    await call('DELETE', `/admin/v1/connectors/${connectorId}/rates/${r.rateId}`, { admin: true });
    list.reload();
  });
  const items: any[] = list.data?.items ?? [];
  const now = Date.now();
  return (
    <div class="rates">
      <ErrorBox error={list.error ?? withdraw.error} />
      {list.data && items.length === 0 ? <Empty>No rate: its routes' costPerPart applies.</Empty> : null}
      {items.length > 0 ? (
        <table aria-label={`Rates of ${name}`}>
          <thead>
            <tr>
              <th scope="col">Type</th>
              <th scope="col">Prefix</th>
              <th scope="col">Country</th>
              <th scope="col">MCC/MNC</th>
              <th scope="col" class="num">
                Price a part
              </th>
              <th scope="col">From</th>
              <th scope="col">Until</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((r) => (
              <tr data-rate-id={r.rateId}>
                <td>{r.type ?? 'any'}</td>
                <td>{r.prefix ?? '—'}</td>
                <td>{r.country ?? '—'}</td>
                <td>{r.mccMnc ?? '—'}</td>
                <td class="num">{euros(r.price, 6)}</td>
                <td>{when(r.validFrom)}</td>
                <td>{r.validTo ? when(r.validTo) : 'open'}</td>
                <td>
                  {Date.parse(r.validFrom) > now ? (
                    <button
                      type="button"
                      class="secondary"
                      aria-label={`Withdraw the rate from ${when(r.validFrom)}`}
                      disabled={withdraw.busy}
                      onClick={() => void withdraw.run(r)}
                    >
                      Withdraw
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <form
        class="form"
        aria-label={`Import a price list into ${name}`}
        onSubmit={(e) => {
          e.preventDefault();
          void upload.run();
        }}
      >
        <Field id={`rates-${connectorId}`} label="Price list (CSV: country, mcc, mnc, prefix, price, currency, valid_from, valid_to, type)">
          <textarea id={`rates-${connectorId}`} rows={4} required value={csv} onInput={(e) => setCsv((e.target as HTMLTextAreaElement).value)} />
        </Field>
        <button type="submit" disabled={upload.busy}>
          Import
        </button>
        <ErrorBox error={upload.error} />
        {imported !== null ? (
          <p class="hint" role="status">
            {imported} {imported === 1 ? 'rate' : 'rates'} imported.
          </p>
        ) : null}
      </form>
    </div>
  );
}

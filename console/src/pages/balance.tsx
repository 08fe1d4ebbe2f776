import { useState } from 'preact/hooks';
import { call, get, query } from '../api.ts';
import { euros, when } from '../format.ts';
import { useSession } from '../session.ts';
import { Empty, ErrorBox, Field, Notice, Page, useAction, useLoad } from '../ui.tsx';

function TransferForm({ own, subs, onDone }: { own: any; subs: any[]; onDone: () => void }) {
  const [direction, setDirection] = useState<'to' | 'from'>('to');
  const [other, setOther] = useState(subs[0]?.organisationId ?? '');
  const [amount, setAmount] = useState('');
  const [reference, setReference] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const transfer = useAction(async () => {
    const source = direction === 'to' ? own.organisationId : other;
    const destination = direction === 'to' ? other : own.organisationId;
    const t = await call('POST', `/commons/v1/organisations/${source}/transfers`, {
      body: { organisationDestination: { organisationId: destination }, amount, ...(reference && { reference }) },
      // One key per submission: a retried request never moves the funds twice.
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    setDone(`${euros(t.amount, 6)} moved from ${t.organisationSource.name} to ${t.organisationDestination.name}.`);
    setAmount('');
    onDone();
  });
  return (
    <form
      class="form"
      aria-label="Transfer"
      onSubmit={(e) => {
        e.preventDefault();
        void transfer.run();
      }}
    >
      <h2>Transfer</h2>
      <div class="row">
        <Field id="t-dir" label="Direction">
          <select id="t-dir" value={direction} onChange={(e) => setDirection((e.target as HTMLSelectElement).value as 'to' | 'from')}>
            <option value="to">To a sub-organisation</option>
            <option value="from">Back from a sub-organisation</option>
          </select>
        </Field>
        <Field id="t-org" label="Sub-organisation">
          <select id="t-org" value={other} onChange={(e) => setOther((e.target as HTMLSelectElement).value)}>
            {subs.map((o) => (
              <option value={o.organisationId}>
                {o.name} ({euros(o.balance.amount, 2)})
              </option>
            ))}
          </select>
        </Field>
        <Field id="t-amount" label="Amount (€)">
          <input id="t-amount" inputMode="decimal" required value={amount} onInput={(e) => setAmount((e.target as HTMLInputElement).value)} />
        </Field>
        <Field id="t-ref" label="Reference">
          <input id="t-ref" maxLength={140} value={reference} onInput={(e) => setReference((e.target as HTMLInputElement).value)} />
        </Field>
      </div>
      <button type="submit" disabled={transfer.busy}>
        Transfer
      </button>
      <ErrorBox error={transfer.error} />
      {done ? <Notice>{done}</Notice> : null}
    </form>
  );
}

export function Balance() {
  const s = useSession();
  const orgId = s.channel.organisationId;
  const [pages, setPages] = useState(1);
  const org = useLoad(() => get(`/commons/v1/organisations/${orgId}`), [orgId]);
  const tree = useLoad(() => get(`/commons/v1/organisations${query({ pageSize: 100 })}`).catch(() => ({ items: [] })), [orgId]);
  const ledger = useLoad(async () => {
    const items: any[] = [];
    for (let p = 1; p <= pages; p++) items.push(...(await get(`/commons/v1/organisations/${orgId}/ledger${query({ page: p, pageSize: 50 })}`)).items);
    return items;
  }, [orgId, pages]);
  const transfers = useLoad(() => get(`/commons/v1/organisations/${orgId}/transfers${query({ pageSize: 20 })}`), [orgId]);
  const reload = () => {
    org.reload();
    tree.reload();
    ledger.reload();
    transfers.reload();
  };
  const subs = (tree.data?.items ?? []).filter((o: any) => o.parentOrganisationId === orgId);
  const o = org.data;
  return (
    <Page title="Balance">
      <ErrorBox error={org.error} />
      {o ? (
        <dl class="facts big">
          <dt>Balance</dt>
          <dd data-testid="balance">{euros(o.balance.amount, 6)}</dd>
          <dt>This month</dt>
          <dd>
            {euros(o.monthlyConsumption)}
            {o.monthlyConsumptionLimit !== undefined ? <> of {euros(o.monthlyConsumptionLimit, 2)} allowed</> : null}
          </dd>
          {o.balance.parentBilling ? (
            <>
              <dt>Billing</dt>
              <dd>Billed by the parent organisation</dd>
            </>
          ) : null}
        </dl>
      ) : null}
      {s.roles.includes('ADMIN') && o && subs.length > 0 ? <TransferForm own={o} subs={subs} onDone={reload} /> : null}
      {s.roles.includes('ADMIN') && subs.length === 0 ? (
        <p class="hint">Transfers move funds to and from sub-organisations; this organisation has none.</p>
      ) : null}
      <h2>Ledger</h2>
      <ErrorBox error={ledger.error} />
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Date</th>
              <th scope="col">Kind</th>
              <th scope="col">Description</th>
              <th scope="col" class="num">
                Amount
              </th>
              <th scope="col" class="num">
                Balance after
              </th>
            </tr>
          </thead>
          <tbody>
            {(ledger.data ?? []).map((e: any) => (
              <tr>
                <td>{when(e.creationDate)}</td>
                <td>{e.kind}</td>
                <td class="text">
                  {e.description ?? e.reference ?? ''}
                  {e.messageId ? (
                    <>
                      {' '}
                      <a href={`#/messages/${e.messageId}`}>message</a>
                    </>
                  ) : null}
                </td>
                <td class={`num ${e.amount < 0 ? 'neg' : 'pos'}`}>{euros(e.amount, 6)}</td>
                <td class="num">{euros(e.balance, 6)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {(ledger.data?.length ?? 0) === pages * 50 ? (
        <button type="button" class="secondary" onClick={() => setPages(pages + 1)}>
          More
        </button>
      ) : null}
      <h2>Transfers</h2>
      {transfers.data?.items.length === 0 ? <Empty>No transfer.</Empty> : null}
      <ul class="plain">
        {(transfers.data?.items ?? []).map((t: any) => (
          <li>
            {when(t.creationDate)} · {t.type === 'DEBIT' ? 'to' : 'from'} {t.type === 'DEBIT' ? t.organisationDestination.name : t.organisationSource.name} ·{' '}
            {euros(t.amount, 6)}
            {t.reference ? ` · ${t.reference}` : ''}
          </li>
        ))}
      </ul>
    </Page>
  );
}

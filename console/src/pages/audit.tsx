import { useState } from 'preact/hooks';
import { call, query } from '../api.ts';
import { download, when } from '../format.ts';
import { Empty, ErrorBox, Field, Page, useAction, useLoad } from '../ui.tsx';

const PAGE_SIZE = 50;

/** A state of the audit log, short enough for a table cell. */
function state(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = JSON.stringify(value);
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}

/**
 * The audit log: who changed what, when and from where, newest first, with filters and CSV. `operator`: the whole
 * platform's (/admin/v1/audit); otherwise the organisation's (/commons/v1/audit, ADMIN keys).
 */
export function Audit({ operator }: { operator: boolean }) {
  const [draft, setDraft] = useState({ action: '', actor: '', objectId: '', from: '', until: '' });
  const [filters, setFilters] = useState(draft);
  const [page, setPage] = useState(1);
  const base = operator ? '/admin/v1/audit' : '/commons/v1/audit';
  const params = (extra: Record<string, string | number>) =>
    query({
      'searchBy[action]': filters.action,
      'searchBy[actor]': filters.actor,
      'searchBy[objectId]': filters.objectId,
      'searchBy[from]': filters.from ? new Date(filters.from).toISOString() : '',
      'searchBy[until]': filters.until ? new Date(filters.until).toISOString() : '',
      pageSize: PAGE_SIZE,
      ...extra,
    });
  const list = useLoad(() => call('GET', `${base}${params({ page })}`, { admin: operator }), [filters, page, operator]);
  const csv = useAction(async () => download(`audit-${page}.csv`, await call<string>('GET', `${base}${params({ page, format: 'csv' })}`, { admin: operator })));
  const items: any[] = list.data?.items ?? [];
  const input = (key: keyof typeof draft, type = 'text') => (
    <input id={`audit-${key}`} type={type} value={draft[key]} onInput={(e) => setDraft({ ...draft, [key]: (e.target as HTMLInputElement).value })} />
  );
  return (
    <Page
      title="Audit log"
      actions={
        <button type="button" onClick={() => void csv.run()} disabled={csv.busy}>
          Export CSV
        </button>
      }
    >
      <form
        class="row"
        aria-label="Filter the audit log"
        onSubmit={(e) => {
          e.preventDefault();
          setPage(1);
          setFilters(draft);
        }}
      >
        <Field id="audit-action" label="Action" hint="e.g. organisation.update">
          {input('action')}
        </Field>
        <Field id="audit-actor" label="Actor" hint="a key id, or operator">
          {input('actor')}
        </Field>
        <Field id="audit-objectId" label="Object id">
          {input('objectId')}
        </Field>
        <Field id="audit-from" label="From">
          {input('from', 'datetime-local')}
        </Field>
        <Field id="audit-until" label="Until">
          {input('until', 'datetime-local')}
        </Field>
        <div class="field buttons">
          <button type="submit">Filter</button>
        </div>
      </form>
      <ErrorBox error={list.error ?? csv.error} />
      {items.length === 0 && list.data ? <Empty>No change matches.</Empty> : null}
      {items.length > 0 ? (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                {operator ? <th scope="col">Organisation</th> : null}
                <th scope="col">Who</th>
                <th scope="col">Action</th>
                <th scope="col">Object</th>
                <th scope="col">Before</th>
                <th scope="col">After</th>
                <th scope="col">From</th>
              </tr>
            </thead>
            <tbody>
              {items.map((x) => (
                <tr data-audit-id={x.auditId}>
                  <td>{when(x.at)}</td>
                  {operator ? <td>{x.organisationId ?? 'platform'}</td> : null}
                  <td>
                    {x.actor.type} <code>{x.actor.id}</code>
                  </td>
                  <td>
                    <code>{x.action}</code>
                  </td>
                  <td>
                    <code>{x.object.id ?? ''}</code>
                  </td>
                  <td>
                    <code>{state(x.before)}</code>
                  </td>
                  <td>
                    <code>{state(x.after)}</code>
                  </td>
                  <td>
                    {x.interface} {x.remoteAddress ?? ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <div class="row">
        <button type="button" disabled={page === 1} onClick={() => setPage(page - 1)}>
          Newer
        </button>
        <span>Page {page}</span>
        <button type="button" disabled={items.length < PAGE_SIZE} onClick={() => setPage(page + 1)}>
          Older
        </button>
      </div>
    </Page>
  );
}

import { useState } from 'preact/hooks';
import { call, post } from '../api.ts';
import { when } from '../format.ts';
import { useSession } from '../session.ts';
import { Empty, ErrorBox, Field, Page, useAction, useLoad } from '../ui.tsx';

/** The organisation's sender registry: what it may send from, where, and the operator's decision; ADMIN keys ask for more. */
export function Senders() {
  const s = useSession();
  const list = useLoad(() => call('GET', '/commons/v1/senders'), []);
  const [value, setValue] = useState('');
  const [countries, setCountries] = useState('');
  const ask = useAction(async () => {
    await post('/commons/v1/senders', { value, countries: countries.split(/[\s,]+/).filter(Boolean) });
    setValue('');
    setCountries('');
    list.reload();
  });
  const items: any[] = list.data?.items ?? [];
  return (
    <Page title="Senders">
      {s.roles.includes('ADMIN') ? (
        <form
          class="row"
          aria-label="Ask for a sender"
          onSubmit={(e) => {
            e.preventDefault();
            void ask.run();
          }}
        >
          <Field id="sender-value" label="Sender" hint="Up to 11 letters and digits, a short code or a number">
            <input id="sender-value" required maxLength={15} value={value} onInput={(e) => setValue((e.target as HTMLInputElement).value)} />
          </Field>
          <Field id="sender-countries" label="Countries" hint="ISO codes, e.g. FR BE; empty: every country">
            <input id="sender-countries" value={countries} onInput={(e) => setCountries((e.target as HTMLInputElement).value)} />
          </Field>
          <div class="field buttons">
            <button type="submit" disabled={ask.busy}>
              Ask for it
            </button>
          </div>
        </form>
      ) : null}
      <ErrorBox error={ask.error ?? list.error} />
      {items.length === 0 && list.data ? <Empty>No sender registered: any sender goes on channels without a sender list.</Empty> : null}
      {items.length > 0 ? (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Sender</th>
                <th scope="col">Kind</th>
                <th scope="col">Countries</th>
                <th scope="col">Status</th>
                <th scope="col">Changed</th>
              </tr>
            </thead>
            <tbody>
              {items.map((x) => (
                <tr data-sender-id={x.senderId}>
                  <td>
                    <code>{x.value}</code>
                  </td>
                  <td>{x.kind}</td>
                  <td>{x.countries.length === 0 ? 'every country' : x.countries.join(', ')}</td>
                  <td>{x.status}</td>
                  <td>{when(x.updateDate)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </Page>
  );
}

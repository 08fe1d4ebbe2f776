import { useState } from 'preact/hooks';
import { get } from '../api.ts';
import { ErrorBox, Field, Page, useAction } from '../ui.tsx';

const LABELS: Array<[string, string]> = [
  ['valid', 'Valid'],
  ['type', 'Type'],
  ['country', 'Country'],
  ['isoCountryCode', 'ISO country'],
  ['network', 'Network (allocated)'],
  ['mccMnc', 'MCC/MNC'],
  ['reachable', 'Reachable now'],
  ['ported', 'Ported'],
  ['roaming', 'Roaming'],
  ['currentNetwork', 'Serving network'],
  ['offline', 'From the number plan only'],
];

function show(v: unknown): string {
  if (v === true) return 'yes';
  if (v === false) return 'no';
  if (v === undefined || v === null) return '—';
  if (typeof v === 'object') {
    const n = v as { name?: string; mccMnc?: string };
    return [n.name, n.mccMnc && `(${n.mccMnc})`].filter(Boolean).join(' ') || '—';
  }
  return String(v);
}

export function Lookup() {
  const [number, setNumber] = useState('');
  const [card, setCard] = useState<any>(null);
  const look = useAction(async () => setCard(await get(`/commons/v1/lookup/${encodeURIComponent(number.trim())}`)));
  return (
    <Page title="Lookup">
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void look.run();
        }}
      >
        <Field id="l-number" label="Phone number" hint="A lookup is charged at the price list's LOOKUP price">
          <input id="l-number" inputMode="tel" required value={number} onInput={(e) => setNumber((e.target as HTMLInputElement).value)} />
        </Field>
        <div class="field buttons">
          <button type="submit" disabled={look.busy}>
            Look up
          </button>
        </div>
      </form>
      <ErrorBox error={look.error} />
      {card ? (
        <article class="card" aria-label={`Number ${card.msisdn ?? number}`}>
          <h2>{card.formats?.international ?? card.msisdn ?? number}</h2>
          <dl class="facts">
            {LABELS.filter(([k]) => k in card).map(([k, label]) => (
              <>
                <dt>{label}</dt>
                <dd data-field={k}>{show(card[k])}</dd>
              </>
            ))}
            {card.formats ? (
              <>
                <dt>National format</dt>
                <dd>{card.formats.national}</dd>
              </>
            ) : null}
          </dl>
        </article>
      ) : null}
    </Page>
  );
}

import { useEffect, useState } from 'preact/hooks';
import { call, get } from '../api.ts';
import { ErrorBox, Field, Notice, useAction, useLoad } from '../ui.tsx';

const admin = { admin: true };
const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
type Day = { open: boolean; from: string; to: string };

/** An organisation's marketing sending window: hours per weekday, holidays and the ramp (operator API). */
export function SendingWindow({ organisationId }: { organisationId: string }) {
  const path = `/admin/v1/organisations/${organisationId}/sending-window`;
  const current = useLoad(() => get(path, admin), [organisationId]);
  const [days, setDays] = useState<Record<string, Day>>({});
  const [enabled, setEnabled] = useState(true);
  const [calendar, setCalendar] = useState('FR');
  const [holidays, setHolidays] = useState('');
  const [ramp, setRamp] = useState('10');
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    const w = current.data;
    if (!w) return;
    setDays(Object.fromEntries(WEEKDAYS.map((d) => [d, w.hours[d] ? { open: true, ...w.hours[d] } : { open: false, from: '08:00', to: '20:00' }])));
    setEnabled(w.enabled);
    setCalendar(w.holidayCalendar);
    setHolidays(w.holidays.join(', '));
    setRamp(String(w.rampPerSecond));
  }, [current.data]);
  const save = useAction(async () => {
    setSaved(false);
    await call('PUT', path, {
      admin: true,
      body: {
        enabled,
        hours: Object.fromEntries(WEEKDAYS.map((d) => [d, days[d]!.open ? { from: days[d]!.from, to: days[d]!.to } : null])),
        holidayCalendar: calendar,
        holidays: holidays.split(/[\s,]+/).filter((x) => x !== ''),
        rampPerSecond: Number(ramp),
      },
    });
    setSaved(true);
    current.reload();
  });
  const reset = useAction(async () => {
    await call('DELETE', path, { admin: true });
    current.reload();
  });
  const w = current.data;
  if (!w || Object.keys(days).length === 0) return <ErrorBox error={current.error} />;
  const setDay = (d: string, patch: Partial<Day>) => setDays({ ...days, [d]: { ...days[d]!, ...patch } });
  const id = (s: string) => `w-${organisationId}-${s}`;
  return (
    <form
      aria-label="Marketing window"
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      <h3>Marketing window</h3>
      <p class="hint">
        Marketing messages sent outside these hours ({w.timeZone} time) are accepted and go when the window opens.{' '}
        {w.own ? 'Set for this organisation.' : "Its country's default."}
      </p>
      <label>
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled((e.target as HTMLInputElement).checked)} /> Hold marketing traffic outside the
        window
      </label>
      <table>
        <tbody>
          {WEEKDAYS.map((d) => (
            <tr>
              <td>
                <label>
                  <input
                    type="checkbox"
                    aria-label={`Send on ${d}`}
                    checked={days[d]!.open}
                    onChange={(e) => setDay(d, { open: (e.target as HTMLInputElement).checked })}
                  />{' '}
                  {d}
                </label>
              </td>
              <td>
                <input
                  aria-label={`${d} from`}
                  size={5}
                  value={days[d]!.from}
                  disabled={!days[d]!.open}
                  onInput={(e) => setDay(d, { from: (e.target as HTMLInputElement).value })}
                />{' '}
                to{' '}
                <input
                  aria-label={`${d} to`}
                  size={5}
                  value={days[d]!.to}
                  disabled={!days[d]!.open}
                  onInput={(e) => setDay(d, { to: (e.target as HTMLInputElement).value })}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="row">
        <Field id={id('calendar')} label="Public holidays">
          <select id={id('calendar')} value={calendar} onChange={(e) => setCalendar((e.target as HTMLSelectElement).value)}>
            <option value="FR">France's</option>
            <option value="NONE">None computed</option>
          </select>
        </Field>
        <Field id={id('holidays')} label="More days off (YYYY-MM-DD, comma separated)">
          <input id={id('holidays')} value={holidays} onInput={(e) => setHolidays((e.target as HTMLInputElement).value)} />
        </Field>
        <Field id={id('ramp')} label="Ramp (messages a second per channel)">
          <input id={id('ramp')} inputMode="numeric" value={ramp} onInput={(e) => setRamp((e.target as HTMLInputElement).value)} />
        </Field>
      </div>
      <div class="field buttons">
        <button type="submit" disabled={save.busy}>
          Save window
        </button>{' '}
        {w.own ? (
          <button type="button" class="small" onClick={() => void reset.run()}>
            Back to the default
          </button>
        ) : null}
      </div>
      <ErrorBox error={save.error ?? reset.error} />
      {saved ? <Notice>Window saved.</Notice> : null}
    </form>
  );
}

import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { toCsv } from '../../../src/domain/csv.ts';
import { get, query } from '../api.ts';
import { download, euros } from '../format.ts';
import { Empty, ErrorBox, Field, Page, useLoad } from '../ui.tsx';

const TYPES = ['SMS', 'RCS', 'VOICE', 'LOOKUP'];

async function allRecords(type: string, period: string, startDate: string, endDate: string): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; page <= 50; page++) {
    const res = await get(
      `/commons/v1/consumptions${query({ 'searchBy[channel.type]': type, 'searchBy[periodType]': period, startDate, endDate, page, pageSize: 100 })}`,
    );
    out.push(...res.items);
    if (res.items.length < 100) break;
  }
  return out;
}

/** One period's totals over the channels shown. */
interface Period {
  day: string;
  amount: number;
  quantity: number;
  messages: number;
  clicks: number;
}

function isoDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** Price and quantity per period, as a uPlot bar chart. */
function PeriodChart({ periods }: { periods: Period[] }) {
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!el.current || periods.length === 0) return;
    const xs = periods.map((p) => Date.parse(`${p.day}T00:00:00Z`) / 1000);
    const width = Math.max(240, Math.min(900, el.current.clientWidth || 600));
    // Each bar is centred on its period's start: the axis reaches half a period beyond the first and the last, so
    // that the first and the last (today's) bars are drawn whole.
    const half = (xs.length > 1 ? Math.min(...xs.slice(1).map((x, i) => x - xs[i]!)) : 86_400) / 2;
    const plot = new uPlot(
      {
        width,
        height: 260,
        title: 'Spent per period (€)',
        scales: { x: { time: true, range: (_u, min, max) => [min - half, max + half] } },
        axes: [{}, { label: '€', size: 60 }],
        // What the axis spans once drawn, for whoever checks that no bar is cut off.
        hooks: {
          draw: [
            (u) => {
              const box = u.root.parentElement!;
              box.dataset.xMax = String(u.scales.x!.max);
              box.dataset.lastX = String(xs[xs.length - 1]);
              box.dataset.half = String(half);
            },
          ],
        },
        series: [
          {},
          {
            label: 'Spent (€)',
            stroke: '#0b5cad',
            fill: 'rgba(11,92,173,0.25)',
            paths: uPlot.paths.bars!({ size: [0.6, 40] }),
            points: { show: false },
          },
        ],
      },
      [xs, periods.map((p) => p.amount)],
      el.current,
    );
    return () => plot.destroy();
  }, [periods]);
  return <div ref={el} class="chart" role="img" aria-label="Chart of the amount spent per period; the same figures are in the table below" />;
}

function Bars({ title, rows, unit }: { title: string; rows: Array<[string, number]>; unit: string }) {
  const max = Math.max(1, ...rows.map(([, v]) => v));
  return (
    <figure class="bars">
      <figcaption>{title}</figcaption>
      {rows.length === 0 ? <Empty>Nothing in this window.</Empty> : null}
      <table>
        <tbody>
          {rows.map(([k, v]) => (
            <tr>
              <th scope="row">{k}</th>
              <td class="bar-cell">
                <span class="bar" style={{ width: `${(v / max) * 100}%` }} />
              </td>
              <td class="num">
                {v.toLocaleString('en-GB')} {unit}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}

export function Consumption() {
  const today = new Date();
  const [type, setType] = useState('SMS');
  const [period, setPeriod] = useState('DAY');
  const [startDate, setStartDate] = useState(isoDay(new Date(today.getTime() - 30 * 86_400_000)));
  const [endDate, setEndDate] = useState(isoDay(today));
  const data = useLoad(() => allRecords(type, period, startDate, endDate), [type, period, startDate, endDate]);
  const totals = useLoad(
    () =>
      Promise.all(TYPES.map(async (t) => [t, (await allRecords(t, 'MONTH', startDate, endDate)).reduce((n, r) => n + r.price.amount, 0)] as [string, number])),
    [startDate, endDate],
  );
  const [periods, setPeriods] = useState<Period[]>([]);

  const records = data.data ?? [];
  useEffect(() => {
    const by = new Map<string, Period>();
    for (const r of records) {
      const p = by.get(r.startDate) ?? { day: r.startDate, amount: 0, quantity: 0, messages: 0, clicks: 0 };
      p.amount += r.price.amount;
      p.quantity += r.quantity;
      p.messages += r.items.reduce((n: number, i: any) => n + i.statuses.reduce((m: number, st: any) => m + st.quantity, 0), 0);
      p.clicks += r.clicks ?? 0;
      by.set(r.startDate, p);
    }
    // Every period of the window, spent or not, so that the chart's axis is the window.
    if (records.length > 0) {
      const d = new Date(`${startDate}T00:00:00Z`);
      if (period === 'MONTH') d.setUTCDate(1);
      for (let i = 0; i < 400 && isoDay(d) <= endDate; i++) {
        const day = isoDay(d);
        if (!by.has(day)) by.set(day, { day, amount: 0, quantity: 0, messages: 0, clicks: 0 });
        if (period === 'MONTH') d.setUTCMonth(d.getUTCMonth() + 1);
        else d.setUTCDate(d.getUTCDate() + 1);
      }
    }
    setPeriods([...by.values()].sort((a, b) => (a.day < b.day ? -1 : 1)));
  }, [data.data]);

  const networks = new Map<string, number>();
  const statuses = new Map<string, number>();
  for (const r of records) {
    for (const i of r.items) {
      const name = i.lookup.network ?? i.lookup.country ?? 'Unknown network';
      networks.set(name, (networks.get(name) ?? 0) + i.quantity);
      for (const st of i.statuses) statuses.set(st.value, (statuses.get(st.value) ?? 0) + st.quantity);
    }
  }
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);

  const exportCsv = () =>
    download(
      `tern-consumption-${type}-${period}-${startDate}-${endDate}.csv`,
      toCsv([
        ['startDate', 'endDate', 'periodType', 'type', 'channelId', 'channel', 'network', 'quantity', 'amount', 'currency'],
        ...records.flatMap((r) =>
          r.items.length
            ? r.items.map((i: any) => [
                r.startDate,
                r.endDate,
                r.periodType,
                r.type,
                r.channel.channelId,
                r.channel.name,
                i.lookup.network ?? '',
                i.quantity,
                i.price.amount,
                i.price.currency,
              ])
            : [[r.startDate, r.endDate, r.periodType, r.type, r.channel.channelId, r.channel.name, '', r.quantity, r.price.amount, r.price.currency]],
        ),
      ]),
    );

  return (
    <Page
      title="Consumption"
      actions={
        <button type="button" onClick={exportCsv} disabled={records.length === 0}>
          Export CSV
        </button>
      }
    >
      <form class="filters" aria-label="Window" onSubmit={(e) => e.preventDefault()}>
        <Field id="k-type" label="Channel type">
          <select id="k-type" value={type} onChange={(e) => setType((e.target as HTMLSelectElement).value)}>
            {TYPES.map((t) => (
              <option value={t}>{t}</option>
            ))}
          </select>
        </Field>
        <Field id="k-period" label="By">
          <select id="k-period" value={period} onChange={(e) => setPeriod((e.target as HTMLSelectElement).value)}>
            <option value="DAY">Day</option>
            <option value="MONTH">Month</option>
          </select>
        </Field>
        <Field id="k-from" label="From">
          <input id="k-from" type="date" value={startDate} onInput={(e) => setStartDate((e.target as HTMLInputElement).value)} />
        </Field>
        <Field id="k-to" label="To">
          <input id="k-to" type="date" value={endDate} onInput={(e) => setEndDate((e.target as HTMLInputElement).value)} />
        </Field>
      </form>
      <ErrorBox error={data.error} />
      {periods.length ? <PeriodChart periods={periods} /> : !data.loading ? <Empty>No consumption in this window.</Empty> : null}
      <div class="grid2">
        <Bars title="By channel type (€, this window)" rows={(totals.data ?? []).map(([t, v]) => [t, Math.round(v * 10000) / 10000])} unit="€" />
        <Bars title={`By network (${type} units)`} rows={sorted(networks)} unit="units" />
        <Bars title={`By status (${type} messages)`} rows={sorted(statuses)} unit="messages" />
      </div>
      <h2>Periods</h2>
      <div class="table-wrap">
        <table aria-label="Consumption per period">
          <thead>
            <tr>
              <th scope="col">Period</th>
              <th scope="col" class="num">
                Units
              </th>
              <th scope="col" class="num">
                Messages
              </th>
              {type === 'SMS' ? (
                <th scope="col" class="num">
                  Clicks
                </th>
              ) : null}
              <th scope="col" class="num">
                Spent
              </th>
            </tr>
          </thead>
          <tbody>
            {periods
              .filter((p) => p.quantity > 0 || p.amount !== 0)
              .reverse()
              .map((p) => (
                <tr data-period={p.day}>
                  <td>{period === 'MONTH' ? p.day.slice(0, 7) : p.day}</td>
                  <td class="num">{p.quantity}</td>
                  <td class="num">{p.messages}</td>
                  {type === 'SMS' ? (
                    <td class="num" data-testid="period-clicks">
                      {p.clicks}
                    </td>
                  ) : null}
                  <td class="num">{euros(p.amount)}</td>
                </tr>
              ))}
          </tbody>
        </table>
      </div>
    </Page>
  );
}

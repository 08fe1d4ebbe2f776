// What the database drills share: the PostgreSQL backends of one Tern node (found by their application_name in this
// test's own database), ended or frozen from outside; a load over HTTP and SMPP that records every answer.
import { once } from 'node:events';
import pg from 'pg';
import smpp from 'smpp';
import { request } from '../support/server.ts';
import { call } from '../support/smpp.ts';

/** The backends of node `nodeId` (its pool and its listening connection) in the test database, by pid. */
export async function backendsOf(admin: pg.Client, nodeId: string): Promise<number[]> {
  const r = await admin.query<{ pid: number }>(
    `select pid from pg_stat_activity where datname = current_database() and application_name in ($1, $2) and pid <> pg_backend_pid()`,
    [`tern ${nodeId}`, `tern listener ${nodeId}`],
  );
  return r.rows.map((row) => row.pid);
}

/** pg_terminate_backend on every backend of the node; answers how many were ended. */
export async function terminateBackends(admin: pg.Client, nodeId: string): Promise<number> {
  const r = await admin.query<{ ended: boolean }>(
    `select pg_terminate_backend(pid) as ended from pg_stat_activity
      where datname = current_database() and application_name in ($1, $2) and pid <> pg_backend_pid()`,
    [`tern ${nodeId}`, `tern listener ${nodeId}`],
  );
  return r.rows.filter((row) => row.ended).length;
}

/**
 * Why this machine cannot freeze a backend with SIGSTOP (the server is elsewhere, or signals are not permitted), or
 * null when it can: tried on one of the node's own backends, continued at once.
 */
export async function cannotFreeze(admin: pg.Client, nodeId: string): Promise<string | null> {
  const [pid] = await backendsOf(admin, nodeId);
  if (pid === undefined) return 'the node has no backend to try SIGSTOP on';
  try {
    process.kill(pid, 'SIGSTOP');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ESRCH'
      ? 'PostgreSQL runs on another machine: its backends cannot be signalled from here'
      : `SIGSTOP on a PostgreSQL backend is not permitted here (${code})`;
  }
  process.kill(pid, 'SIGCONT');
  return null;
}

/**
 * Freezes the node's backends: SIGSTOP on each of them now and on any new one (a connection made while frozen) every
 * `everyMs`, until `thaw()`, which sends SIGCONT to all of them — also when the test fails (call it in `finally`), and
 * when the test process exits.
 */
export function freeze(admin: pg.Client, nodeId: string, everyMs = 100): { thaw(): Promise<void>; stopped: Set<number> } {
  const stopped = new Set<number>();
  let running = true;
  const continueAll = () => {
    for (const pid of stopped) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // Ended meanwhile.
      }
    }
  };
  process.on('exit', continueAll);
  const sweep = (async () => {
    while (running) {
      for (const pid of await backendsOf(admin, nodeId)) {
        if (stopped.has(pid)) continue;
        try {
          process.kill(pid, 'SIGSTOP');
          stopped.add(pid);
        } catch {
          // Ended between the look and the signal.
        }
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    stopped,
    async thaw() {
      running = false;
      await sweep.catch(() => undefined);
      continueAll();
      process.off('exit', continueAll);
    },
  };
}

export interface Answer {
  /** HTTP status (0: no answer at all), or SMPP command_status. */
  status: number;
  ms: number;
  at: number;
  id?: string;
  retryAfter?: string | null;
  errorCode?: string;
}

/** Sends over HTTP, `concurrency` at a time, until `until()` says stop; records every answer. */
export function httpLoad(url: string, key: string, concurrency: number, until: () => boolean, prefix: string): { answers: Answer[]; done: Promise<unknown> } {
  const answers: Answer[] = [];
  let n = 0;
  const sender = async () => {
    while (!until()) {
      const i = n++;
      const started = Date.now();
      const r = await request({ url }, 'POST', '/sms/v1/messages', {
        key,
        body: { recipient: { to: `3367${String(i).padStart(6, '0')}5` }, body: { text: `${prefix} ${i}` } },
      }).catch(() => null);
      answers.push({
        status: r?.status ?? 0,
        ms: Date.now() - started,
        at: started,
        ...(r?.status === 201 && { id: r.body.messageId as string }),
        ...(r && r.status !== 201 && { retryAfter: r.headers.get('retry-after'), errorCode: r.body?.errorCode }),
      });
    }
  };
  return { answers, done: Promise.all(Array.from({ length: concurrency }, sender)) };
}

/** An ESME bound as transceiver that submits, `window` at a time, until `until()` says stop; records every answer. */
export async function smppLoad(
  port: number,
  systemId: string,
  password: string,
  window: number,
  until: () => boolean,
): Promise<{ answers: Answer[]; done: Promise<unknown>; closed(): boolean; close(): void }> {
  const session = smpp.connect({ host: '127.0.0.1', port });
  session.on('error', () => {});
  session.on('enquire_link', (pdu: smpp.PDU) => session.send(pdu.response()));
  session.on('deliver_sm', (pdu: smpp.PDU) => session.send(pdu.response()));
  let closed = false;
  session.on('close', () => {
    closed = true;
  });
  await once(session, 'connect');
  const bind = await call(session, 'bind_transceiver', { system_id: systemId, password, system_type: 'drill' });
  if (bind.command_status !== 0) throw new Error(`bind_transceiver: 0x${bind.command_status.toString(16)}`);
  const answers: Answer[] = [];
  let n = 0;
  const submitter = async () => {
    while (!until() && !closed) {
      const i = n++;
      const started = Date.now();
      const resp = await Promise.race([
        call(session, 'submit_sm', { data_coding: 0, destination_addr: `3367${String(i).padStart(6, '0')}6`, short_message: `smpp ${i}` }),
        new Promise<null>((r) => setTimeout(() => r(null), 60_000)),
      ]).catch(() => null);
      answers.push({
        status: resp === null ? -1 : resp.command_status,
        ms: Date.now() - started,
        at: started,
        ...(resp?.command_status === 0 && { id: String(resp['message_id']) }),
      });
    }
  };
  return {
    answers,
    done: Promise.all(Array.from({ length: window }, submitter)),
    closed: () => closed,
    close: () => session.close(),
  };
}

/** Sends over the legacy HTTP interface (sendSMS.do), one at a time, until `until()` says stop; records every answer. */
export function legacyLoad(url: string, key: string, until: () => boolean): { answers: Array<Answer & { line: string }>; done: Promise<unknown> } {
  const answers: Array<Answer & { line: string }> = [];
  const done = (async () => {
    for (let i = 0; !until(); i++) {
      const started = Date.now();
      const q = new URLSearchParams({ accessToken: key, numero: `3367${String(i).padStart(6, '0')}7`, message: `legacy ${i}` });
      const res = await fetch(`${url}/http/1.6/sendSMS.do?${q}`).catch(() => null);
      const line = res ? await res.text() : '';
      const id = /^0 \| [^|]*\| (\S+)$/.exec(line)?.[1];
      answers.push({
        status: res?.status ?? 0,
        ms: Date.now() - started,
        at: started,
        line,
        retryAfter: res?.headers.get('retry-after') ?? null,
        ...(id && { id }),
      });
    }
  })();
  return { answers, done };
}

import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogFormat, LogLevel } from './config/index.ts';
import { maskMsisdn } from './domain/privacy.ts';
import { writeKeysFile } from './keys-file.ts';
import { createLogger } from './log-redaction.ts';
import type { Announcement } from './startup-report.ts';

const LEVEL_NAMES: Readonly<Record<number, string>> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const LEVEL_COLOURS: Readonly<Record<number, string>> = { 10: '90', 20: '90', 30: '32', 40: '33', 50: '31', 60: '31' };
/** Fields every record has, or that the line shows in its own place. */
const SHOWN_APART = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'component', 'err']);

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function value(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (v === null || typeof v !== 'object') return String(v);
  return JSON.stringify(v);
}

/**
 * One pino record as a line a person reads: `14:03:07.412 INFO  [smpp] SMPP listening  port=8776`, local time,
 * the error's stack indented below it.
 */
export function prettyLine(record: Record<string, unknown>, colour = false): string {
  const t = typeof record.time === 'number' ? new Date(record.time) : new Date();
  const time = `${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}.${pad(t.getMilliseconds(), 3)}`;
  const levelNumber = typeof record.level === 'number' ? record.level : 30;
  const name = (LEVEL_NAMES[levelNumber] ?? String(record.level)).padEnd(5);
  const level = colour ? `\u001b[${LEVEL_COLOURS[levelNumber] ?? '0'}m${name}\u001b[0m` : name;
  const component = typeof record.component === 'string' ? ` [${record.component}]` : '';
  const fields = Object.entries(record)
    .filter(([k, v]) => !SHOWN_APART.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${value(v)}`)
    .join(' ');
  let line = `${time} ${level}${component} ${typeof record.msg === 'string' ? record.msg : ''}${fields ? `  ${fields}` : ''}`;
  const err = record.err as { stack?: unknown; message?: unknown } | undefined;
  if (err && typeof err === 'object') {
    const text = typeof err.stack === 'string' ? err.stack : typeof err.message === 'string' ? err.message : JSON.stringify(err);
    line += `\n${text.replace(/^/gm, '    ')}`;
  }
  return `${line}\n`;
}

/** A pino destination that writes each record as a {@link prettyLine}. */
export function prettyDestination(out: NodeJS.WritableStream, colour: boolean): DestinationStream {
  return {
    write(chunk: string) {
      for (const json of chunk.split('\n')) {
        if (json === '') continue;
        let record: Record<string, unknown>;
        try {
          record = JSON.parse(json) as Record<string, unknown>;
        } catch {
          out.write(`${json}\n`);
          continue;
        }
        out.write(prettyLine(record, colour));
      }
    },
  };
}

/** The format to write in: the one asked for, else human-readable lines on a terminal and JSON otherwise. */
export function resolveLogFormat(asked: LogFormat | null, out: { isTTY?: boolean }): LogFormat {
  return asked ?? (out.isTTY ? 'pretty' : 'json');
}

export interface Output {
  format: LogFormat;
  logger: Logger;
  /**
   * What the operator must see at start whatever the log level (keys shown once): in pretty format the lines as they
   * are; in JSON one record of each announcement's `msg` and `fields`, and the keys made on this start nowhere in the
   * log but in a file of `keysDirectory` readable by its owner only, which a record names (`keysFile`).
   */
  announce(announcements: readonly Announcement[], keysDirectory: string): void;
}

/** The logger and the start-up announcements of `tern serve`, in one format on `out`. */
export function createOutput(
  settings: { logLevel: LogLevel; logFormat: LogFormat | null; logMaskNumbers?: boolean | null },
  out: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout,
): Output {
  const format = resolveLogFormat(settings.logFormat, out);
  const colour = format === 'pretty' && out.isTTY === true && process.env.NO_COLOR === undefined;
  const destination: DestinationStream =
    format === 'pretty'
      ? prettyDestination(out, colour)
      : out === process.stdout
        ? pino.destination({ dest: 1, sync: true })
        : { write: (chunk: string) => void out.write(chunk) };
  // Phone numbers are masked by default where logs go to a collector (JSON), kept on a terminal (pretty).
  const privacy = { maskNumber: (settings.logMaskNumbers ?? format === 'json') ? maskMsisdn : null };
  const logger = createLogger(settings.logLevel, destination, privacy);
  const announcer = createLogger('info', destination, privacy);
  return {
    format,
    logger,
    announce(announcements, keysDirectory) {
      if (format === 'pretty') {
        for (const a of announcements) out.write(`${a.lines.join('\n')}\n`);
        return;
      }
      if (announcements.some((a) => a.showsKey)) {
        try {
          const keysFile = writeKeysFile(
            keysDirectory,
            announcements.flatMap((a) => a.lines),
          );
          announcer.info(
            { keysFile },
            `the keys made on this start are in ${keysFile} (readable by its owner only), not in this log: keep them elsewhere, then delete the file`,
          );
        } catch (err) {
          announcer.error(
            { err, keysDirectory },
            'the keys made on this start could not be written to a file, and are never logged: start with TERN_ADMIN_KEY set for a known operator key, and get channel keys with POST /admin/v1/channels/{channelId}/credentials',
          );
        }
      }
      for (const a of announcements) announcer.info(a.fields, a.msg);
    },
  };
}

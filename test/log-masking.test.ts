import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { createOutput } from '../src/log-format.ts';
import { maskMsisdn } from '../src/domain/privacy.ts';
import { createLogger, maskNumbersInRecord, maskNumbersInUrl } from '../src/log-redaction.ts';

test('numbers in URL paths and queries are masked, ids and other digits are not', () => {
  assert.equal(maskNumbersInUrl('/commons/v1/lookup/33612345678', maskMsisdn), '/commons/v1/lookup/33*******78');
  assert.equal(maskNumbersInUrl('/commons/v1/blacklist/%2B33612345678?x=1', maskMsisdn), '/commons/v1/blacklist/%2B33*******78?x=1');
  assert.equal(
    maskNumbersInUrl('/http/1.6/sendSMS.do?numero=33612345678,447700900123&message=hi', maskMsisdn),
    '/http/1.6/sendSMS.do?numero=33*******78,44********23&message=hi',
  );
  assert.equal(maskNumbersInUrl('/sms/v1/messages/0192f0c4-1234-7000-8000-123456789012', maskMsisdn), '/sms/v1/messages/0192f0c4-1234-7000-8000-123456789012');
  assert.equal(maskNumbersInUrl('/x?page=2&pageSize=100&at=1733000000&to=+33612345678', maskMsisdn), '/x?page=2&pageSize=100&at=1733000000&to=+33*******78');
});

test('phone fields are masked at any of three levels, lists too; other fields stay', () => {
  const record = {
    msg: 'sent',
    to: '33612345678',
    event: { from: '+447700900123', to: ['33612345678', 'ACME'] },
    recipient: { to: '14155552671' },
    id: '33612345678x',
  };
  assert.deepEqual(maskNumbersInRecord(record, maskMsisdn), {
    msg: 'sent',
    to: '33*******78',
    event: { from: '+44********23', to: ['33*******78', 'ACME'] },
    recipient: { to: '1********71' },
    id: '33612345678x',
  });
  assert.equal(record.to, '33612345678', 'the record itself is left as it was');
  const untouched = { msg: 'nothing', count: 3 };
  assert.equal(maskNumbersInRecord(untouched, maskMsisdn), untouched);
});

function capture(): { stream: PassThrough; lines: () => Array<Record<string, unknown>> } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (c: Buffer) => (text += c.toString()));
  return {
    stream,
    lines: () =>
      text
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

test('a logger that masks writes no whole number; one that does not writes them', () => {
  const masked = capture();
  createLogger('info', { write: (s: string) => void masked.stream.write(s) }, { maskNumber: maskMsisdn }).warn(
    { msisdn: '33612345678', req: { url: '/x' } },
    'lookup failed',
  );
  const plain = capture();
  createLogger('info', { write: (s: string) => void plain.stream.write(s) }).warn({ msisdn: '33612345678' }, 'lookup failed');
  assert.equal(masked.lines()[0]!.msisdn, '33*******78');
  assert.equal(plain.lines()[0]!.msisdn, '33612345678');
});

test('JSON output masks numbers by default, pretty output does not, and the setting decides either way', () => {
  const run = (format: 'json' | 'pretty', mask: boolean | null) => {
    let text = '';
    const out = Object.assign(new PassThrough(), { isTTY: false });
    out.on('data', (c: Buffer) => (text += c.toString()));
    createOutput({ logLevel: 'info', logFormat: format, logMaskNumbers: mask }, out).logger.info({ to: '33612345678' }, 'sent');
    return text;
  };
  assert.ok(run('json', null).includes('"to":"33*******78"'));
  assert.ok(run('pretty', null).includes('to=33612345678'));
  assert.ok(run('json', false).includes('"to":"33612345678"'));
  assert.ok(run('pretty', true).includes('to=33*******78'));
});

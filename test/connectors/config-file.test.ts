import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { admin, routedTo } from '../support/connectors.ts';
import { startTestServer } from '../support/server.ts';

describe('connectors and routes from the configuration file', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tern-config-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the file’s connectors and routes are created at start, win over API changes, and go when the file drops them', async () => {
    const file = join(dir, 'tern.yaml');
    writeFileSync(
      file,
      [
        'connectors:',
        '  - name: from-file',
        '    type: SIMULATOR',
        '    receiptLatencyMs: 5',
        '  - name: also-from-file',
        '    type: SIMULATOR',
        'routes:',
        '  - name: file route',
        '    priority: 2',
        '    match: { prefix: "44" }',
        '    connectors: [{ connector: from-file, weight: 1 }]',
        '    failover: [also-from-file]',
      ].join('\n'),
    );
    const first = await startTestServer('sqlite', { TERN_CONFIG: file });
    try {
      const list = await admin(first, 'GET', '/admin/v1/connectors');
      const fromFile = list.body.items.find((c: any) => c.name === 'from-file');
      assert.equal(fromFile.source, 'CONFIG');
      assert.equal(fromFile.receiptLatencyMs, 5);
      const routes = await admin(first, 'GET', '/admin/v1/routes');
      const r = routes.body.items.find((x: any) => x.name === 'file route');
      assert.equal(r.source, 'CONFIG');
      assert.deepEqual(
        r.failover.map((f: any) => f.name),
        ['also-from-file'],
      );
      await routedTo(first, '447911123456', 'from-file');
      // An API change to a file-defined connector lasts until the next start.
      await admin(first, 'PATCH', `/admin/v1/connectors/${fromFile.connectorId}`, { receiptLatencyMs: 50 });
      writeFileSync(file, ['connectors:', '  - name: from-file', '    type: SIMULATOR', '    receiptLatencyMs: 7', 'routes: []'].join('\n'));
      const second = await startTestServer('sqlite', { TERN_CONFIG: file, TERN_DATABASE_URL: first.app.config.databaseUrl });
      try {
        const after = await admin(second, 'GET', '/admin/v1/connectors');
        assert.equal(after.body.items.find((c: any) => c.name === 'from-file').receiptLatencyMs, 7, 'the file wins at start');
        assert.equal(
          after.body.items.find((c: any) => c.name === 'also-from-file'),
          undefined,
          'dropped from the file, removed',
        );
        assert.equal(
          (await admin(second, 'GET', '/admin/v1/routes')).body.items.find((x: any) => x.name === 'file route'),
          undefined,
        );
      } finally {
        await second.stop();
      }
    } finally {
      await first.stop();
    }
  });

  test('a bad entry stops the start naming it', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        connectors: [
          { name: 'ok', type: 'SIMULATOR' },
          { name: 'no-key', type: 'SMSMODE_HTTP', baseUrl: 'https://example.com' },
        ],
      }),
    );
    await assert.rejects(startTestServer('sqlite', { TERN_CONFIG: file }), /connectors\[1\]\.apiKey: is required/);
  });

  test('a connector’s rates in the file are loaded once, whatever the number of starts', async () => {
    const file = join(dir, 'rates.yaml');
    const write = (extra: string[]) =>
      writeFileSync(
        file,
        [
          'connectors:',
          '  - name: priced',
          '    type: SIMULATOR',
          '    rates:',
          '      - { country: FR, price: 0.031 }',
          '      - { mcc: "208", mnc: "15", price: 0.028, validFrom: "2027-01-01" }',
          ...extra,
        ].join('\n'),
      );
    write([]);
    const rates = async (server: Awaited<ReturnType<typeof startTestServer>>) => {
      const c = (await admin(server, 'GET', '/admin/v1/connectors')).body.items.find((x: any) => x.name === 'priced');
      return (await admin(server, 'GET', `/admin/v1/connectors/${c.connectorId}/rates`)).body.items;
    };
    const first = await startTestServer('sqlite', { TERN_CONFIG: file });
    try {
      const loaded = await rates(first);
      assert.deepEqual(
        loaded.map((r: any) => [r.country, r.mccMnc, r.price, r.validFrom]),
        [
          ['FR', undefined, 0.031, '1970-01-01T00:00:00.000Z'],
          [undefined, '20815', 0.028, '2027-01-01T00:00:00.000Z'],
        ],
      );
      write(['      - { country: FR, price: 0.029, validFrom: "2027-06-01" }']);
      const second = await startTestServer('sqlite', { TERN_CONFIG: file, TERN_DATABASE_URL: first.app.config.databaseUrl });
      try {
        assert.equal((await rates(second)).length, 3, 'the new rate added, the others not again');
      } finally {
        await second.stop();
      }
    } finally {
      await first.stop();
    }
    write(['      - { country: FR, price: 0.029, currency: USD }']);
    await assert.rejects(startTestServer('sqlite', { TERN_CONFIG: file }), /connectors\[0\]\.rates\[2\]\.currency: only EUR/);
  });
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openStore } from '../../src/store/db.ts';
import { type DialectName, forEachDialect, freshDatabase } from '../support/server.ts';

forEachDialect('migrations', (dialect: DialectName) => {
  test('a node opening an up-to-date database is not upset by another schema dropped meanwhile', async () => {
    const own = await freshDatabase(dialect);
    try {
      await (await openStore(own.url)).close();
      // Other schemas of the same database come and go while this one is opened again and again (with SQLite,
      // other files: nothing is shared, the test stands for the same promise).
      let stop = false;
      const churn = (async () => {
        let made = 0;
        while (!stop || made === 0) {
          const other = await freshDatabase(dialect);
          await (await openStore(other.url)).close();
          await other.cleanup();
          made++;
        }
        return made;
      })();
      const failures: string[] = [];
      for (let i = 0; i < 30; i++) {
        try {
          await (await openStore(own.url)).close();
        } catch (err) {
          failures.push((err as Error).message);
        }
      }
      stop = true;
      assert.ok((await churn) > 0);
      assert.deepEqual(failures, []);
    } finally {
      await own.cleanup();
    }
  });
});

import { setFlagsFromString } from 'node:v8';
import type { Io } from '../io.ts';

/**
 * `tern serve [--demo]`: the server in this process, until SIGTERM or SIGINT. Its modules are loaded only here,
 * so that the other commands start fast.
 */
export async function serve(io: Io, opts: { demo?: boolean }): Promise<void> {
  const { createApp } = await import('../../app/index.ts');
  const { ConfigError, loadConfig } = await import('../../config/index.ts');
  const { createOutput } = await import('../../log-format.ts');
  const { startupAnnouncements } = await import('../../startup-report.ts');
  const { dataDirectory } = await import('../../data-directory.ts');
  const demo = opts.demo === true;
  const env = { ...io.env };
  if (demo && env.TERN_WEBHOOK_ALLOW_PRIVATE === undefined) env.TERN_WEBHOOK_ALLOW_PRIVATE = 'true';
  try {
    const config = loadConfig(env);
    // The heap's growth between full collections decides a busy node's memory more than its live data does.
    if (config.heapGrowthPercent > 0) setFlagsFromString(`--heap-growing-percent=${config.heapGrowthPercent}`);
    const output = createOutput(config);
    const { isStorageError } = await import('../../core/errors.ts');
    // A failure of the database that reached no handler (a background task's) never ends the node: the store has
    // logged it (once for a flood) and retries. Anything else keeps Node's behaviour: it ends the process.
    process.on('unhandledRejection', (reason) => {
      if (isStorageError(reason)) return;
      throw reason;
    });
    const app = await createApp(config, { demo, logger: output.logger });
    const log = app.logger;
    if (demo && config.webhookAllowPrivate) {
      log.warn('demo profile: webhooks to private and loopback addresses are allowed (TERN_WEBHOOK_ALLOW_PRIVATE=true)');
    }
    const { httpPort, httpsPort } = await app.start();
    const base = config.publicUrl ?? `http://localhost:${httpPort}`;
    const https = httpsPort === undefined ? '' : ` and https://localhost:${httpsPort}`;
    log.info(
      { httpPort, ...(httpsPort !== undefined && { httpsPort }), database: app.store.dialect },
      `Tern listening on ${base}${https} (console: ${base}/console/, API docs: ${base}/docs)`,
    );
    const facts = { base, adminKey: app.adminKey, adminKeyConfigured: config.adminKey !== null, demo: app.demo };
    output.announce(startupAnnouncements(facts), dataDirectory(config.databaseUrl));

    let stopping = false;
    const shutdown = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'stopping: draining work in flight');
      try {
        await app.stop();
        log.info('stopped');
        process.exit(0);
      } catch (err) {
        log.error({ err }, 'error while stopping');
        process.exit(1);
      }
    };
    process.on('SIGTERM', () => void shutdown('SIGTERM'));
    process.on('SIGINT', () => void shutdown('SIGINT'));
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr.write(`tern: ${err.message}\n`);
      process.exit(78);
    }
    // The database out of reach or its disk full: one line that says why (its driver's stack says nothing more).
    const { isStorageError } = await import('../../core/errors.ts');
    if (isStorageError(err)) io.stderr.write(`tern: failed to start: ${(err as Error).message}\n`);
    else io.stderr.write(`tern: failed to start: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  }
}

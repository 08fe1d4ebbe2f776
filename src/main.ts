import { createApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';

const USAGE = `usage: tern serve [--demo]

  serve     start the HTTP API (and the SMPP server) with the configuration from TERN_* variables
  --demo    also create, on first start, a demo organisation with an SMS channel and an API key,
            and allow webhooks to private addresses (local receivers)`;

async function serve(args: string[]): Promise<void> {
  const demo = args.includes('--demo');
  const env = { ...process.env };
  if (demo && env.TERN_WEBHOOK_ALLOW_PRIVATE === undefined) env.TERN_WEBHOOK_ALLOW_PRIVATE = 'true';
  const config = loadConfig(env);
  const app = await createApp(config, { demo });
  const log = app.logger;
  if (demo && config.webhookAllowPrivate) {
    log.warn('demo profile: webhooks to private and loopback addresses are allowed (TERN_WEBHOOK_ALLOW_PRIVATE=true)');
  }
  const { httpPort } = await app.start();
  const base = config.publicUrl ?? `http://localhost:${httpPort}`;
  log.info({ httpPort, database: app.store.dialect }, `Tern listening on ${base}`);

  const lines: string[] = [];
  if (app.adminKey.generated) {
    lines.push(`Operator key (TERN_ADMIN_KEY), shown once, keep it: ${app.adminKey.generated}`);
  }
  if (app.demo?.apiKey) {
    lines.push(
      `Demo organisation ${app.demo.organisationId}, SMS channel ${app.demo.channelId}.`,
      `Demo API key, shown once, keep it: ${app.demo.apiKey}`,
      '',
      'Try it:',
      `  curl -s -H 'X-Api-Key: ${app.demo.apiKey}' ${base}/commons/v1/channels`,
      `  curl -s -H 'X-Api-Key: ${app.demo.apiKey}' -H 'Content-Type: application/json' \\`,
      `       -d '{"recipient":{"to":"33612345678"},"body":{"text":"Hello from Tern"}}' ${base}/sms/v1/messages`,
    );
  } else if (app.demo) {
    lines.push(
      `Demo organisation ${app.demo.organisationId} and channel ${app.demo.channelId} already exist; their key was printed on the first start.`,
    );
  }
  lines.push(`API docs: ${base}/docs`);
  process.stdout.write(`\n${lines.join('\n')}\n\n`);

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
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (command === 'serve' || command === undefined) return serve(args);
  if (command === '--help' || command === 'help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  process.stderr.write(`unknown command "${command}"\n${USAGE}\n`);
  process.exit(2);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`tern: ${err.message}\n`);
    process.exit(78);
  }
  process.stderr.write(`tern: failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

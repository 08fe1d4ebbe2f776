import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConnectorRegistry } from '../../src/connectors/registry.ts';
import type { ConnectorFactory, FactoryEnvironment } from '../../src/connectors/kind.ts';
import type { Connector } from '../../src/core/ports.ts';
import type { ConnectorDefinition, ConnectorService } from '../../src/core/routing/service.ts';

const silent = { info() {}, warn() {}, error() {}, child: () => silent };

/** A registry over definitions held here, whose connectors take `stopMs` to stop. */
function registryOf(stopMs: number) {
  let definitions: ConnectorDefinition[] = [];
  const listeners: Array<() => void> = [];
  const service = {
    definitions: async () => ({ connectors: definitions, routes: [] }),
    onChange: (l: () => void) => listeners.push(l),
    context: () => ({ emit: async () => undefined }),
  } as unknown as ConnectorService;
  const kind = {
    create: (d: ConnectorDefinition): Connector => ({
      name: d.name,
      kind: 'TEST',
      start: async () => undefined,
      stop: () => new Promise((r) => setTimeout(r, stopMs)),
      submit: async () => [],
    }),
  } as unknown as ConnectorFactory;
  const registry = new ConnectorRegistry(service, {} as FactoryEnvironment, silent as never, { TEST: kind });
  const define = (settings: Record<string, unknown>, enabled = true) => {
    definitions = [{ id: 'c1', name: 'upstream', kind: 'TEST', settings, secrets: {}, source: 'API', enabled } as ConnectorDefinition];
  };
  return { registry, define };
}

test('a connector whose definition changed is told as starting while it restarts, not as unknown', async () => {
  const { registry, define } = registryOf(50);
  define({ v: 1 });
  await registry.load();
  assert.ok(registry.byName('upstream'));
  assert.equal(registry.isStarting('upstream'), false);

  define({ v: 2 });
  const reload = registry.load();
  await new Promise((r) => setTimeout(r, 10));
  // The old one is stopping, the new one not made yet: a callback now is to be retried, not refused as unknown.
  assert.equal(registry.byName('upstream'), undefined);
  assert.equal(registry.isStarting('upstream'), true);
  await reload;
  assert.ok(registry.byName('upstream'));
  assert.equal(registry.isStarting('upstream'), false);

  define({ v: 2 }, false);
  await registry.load();
  assert.equal(registry.byName('upstream'), undefined);
  assert.equal(registry.isStarting('upstream'), false, 'a disabled connector is not coming back');
  assert.equal(registry.isStarting('nobody'), false);
});

test('the connector the router hands out passes each submit its fence, and says what the connector says of its receipts', async () => {
  const fences: unknown[] = [];
  let definitions: ConnectorDefinition[] = [];
  const service = {
    definitions: async () => ({ connectors: definitions, routes: [] }),
    onChange: () => undefined,
    context: () => ({ emit: async () => undefined }),
  } as unknown as ConnectorService;
  const make = (receiptsNameMessage: boolean | undefined) =>
    ({
      create: (d: ConnectorDefinition): Connector => ({
        name: d.name,
        kind: 'TEST',
        ...(receiptsNameMessage !== undefined && { receiptsNameMessage }),
        start: async () => undefined,
        stop: async () => undefined,
        submit: async (batch, fence) => {
          fences.push(fence);
          return batch.map(() => ({ ok: true, upstreamId: 'u' }));
        },
      }),
    }) as unknown as ConnectorFactory;
  const registry = new ConnectorRegistry(service, {} as FactoryEnvironment, silent as never, { NAMING: make(true), PLAIN: make(undefined) });
  definitions = [
    { id: 'c1', name: 'naming', kind: 'NAMING', settings: {}, secrets: {}, source: 'API', enabled: true } as ConnectorDefinition,
    { id: 'c2', name: 'plain', kind: 'PLAIN', settings: {}, secrets: {}, source: 'API', enabled: true } as ConnectorDefinition,
  ];
  await registry.load();
  const fence = { holds: () => true };
  const naming = registry.byName('naming')!;
  await naming.submit([{ id: 'm1' } as never], fence);
  assert.equal(fences[0], fence, 'the fence reaches the connector, which asks it right before the wire');
  assert.equal(naming.receiptsNameMessage, true);
  assert.equal(registry.byName('plain')!.receiptsNameMessage, undefined);
  assert.equal(registry.state('naming')?.counters.submitted, 1, 'still counted');
  await registry.stop();
});

import type { MessageRow } from '../store/messages.ts';
import type { CarrierConnector } from '../core/ports.ts';

export interface Route {
  /** Destination prefix (digits, international form); '' matches every number. */
  prefix: string;
  /** Message type (SMS, RCS, VOICE) or '*'. */
  type: string;
  /** Channel flow or '*'. */
  flow: string;
  connectors: string[];
}

/**
 * Picks the connector for a message: the first route whose prefix, type and flow match, the longest prefix first,
 * and in that route the first connector that is up (failover in order).
 */
export class Router {
  private readonly connectors = new Map<string, CarrierConnector>();
  private readonly down = new Set<string>();
  private routes: Route[] = [];
  private readonly flows = new Map<string, string>();

  register(connector: CarrierConnector): void {
    this.connectors.set(connector.name, connector);
  }

  connector(name: string): CarrierConnector | undefined {
    return this.connectors.get(name);
  }

  all(): CarrierConnector[] {
    return [...this.connectors.values()];
  }

  setRoutes(routes: Route[]): void {
    this.routes = [...routes].sort((a, b) => b.prefix.length - a.prefix.length);
  }

  setChannelFlow(channelId: string, flow: string): void {
    this.flows.set(channelId, flow);
  }

  markDown(name: string, isDown: boolean): void {
    if (isDown) this.down.add(name);
    else this.down.delete(name);
  }

  pick(m: Pick<MessageRow, 'recipient' | 'type' | 'channel_id'>): CarrierConnector | null {
    const flow = this.flows.get(m.channel_id) ?? '*';
    for (const r of this.routes) {
      if (!m.recipient.startsWith(r.prefix)) continue;
      if (r.type !== '*' && r.type !== m.type) continue;
      if (r.flow !== '*' && r.flow !== flow) continue;
      for (const name of r.connectors) {
        const c = this.connectors.get(name);
        if (c && !this.down.has(name)) return c;
      }
    }
    return null;
  }
}

/**
 * Turns between organisations for the requests a node answers. A node's requests share one thread: every request
 * in progress adds its work to each turn of the event loop, and a tenant keeping 64 requests in progress makes every
 * other tenant's request — and the dispatch and receipts of its messages — wait behind all of them. So while other
 * organisations have requests in progress (or had one a moment ago), an organisation has at most `perOrganisation` of
 * its own in progress; the next ones wait, in order, for one of them to be answered. An organisation alone on the node
 * is not held back at all: the rule costs nothing to a single tenant, and a flood takes turns only with others.
 * This is about one node's thread; the traffic limits are what holds for the cluster.
 */
export class TenantAdmission {
  private readonly tenants = new Map<string, Tenant>();
  /** Organisations with requests in progress. */
  private busy = 0;
  /** The last two different organisations that came in, the latest first. */
  private recent: Array<{ id: string; at: number }> = [];

  constructor(
    /** Requests of one organisation in progress at once while others have some (0: no turns). */
    private readonly perOrganisation: number,
    /** How long an organisation counts as present after its last request came in. */
    private readonly presenceMs = 100,
    /** Told when a request waits for its turn. */
    private readonly onWait: () => void = () => undefined,
  ) {}

  /** Waits for the organisation's turn; answers the function that ends it (call it once the request is answered). */
  async enter(organisationId: string, now = Date.now()): Promise<() => void> {
    if (this.perOrganisation <= 0) return () => undefined;
    this.arrived(organisationId, now);
    let tenant = this.tenants.get(organisationId);
    if (!tenant) this.tenants.set(organisationId, (tenant = { running: 0, waiting: [] }));
    if (tenant.waiting.length === 0 && this.mayRun(organisationId, tenant, now)) this.start(tenant);
    else {
      this.onWait();
      // The turn is started by the request that makes room (see `leave`).
      await new Promise<void>((resolve) => tenant.waiting.push(resolve));
    }
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.leave(organisationId, tenant);
    };
  }

  /** Requests waiting for their turn, on this node. */
  get waiting(): number {
    let n = 0;
    for (const t of this.tenants.values()) n += t.waiting.length;
    return n;
  }

  private mayRun(id: string, tenant: Tenant, now: number): boolean {
    return tenant.running < this.perOrganisation || !this.othersPresent(id, tenant, now);
  }

  private othersPresent(id: string, tenant: Tenant, now: number): boolean {
    if (this.busy - (tenant.running > 0 ? 1 : 0) > 0) return true;
    const other = this.recent.find((r) => r.id !== id);
    return other !== undefined && now - other.at < this.presenceMs;
  }

  private arrived(id: string, now: number): void {
    if (this.recent[0]?.id === id) this.recent[0].at = now;
    else this.recent = [{ id, at: now }, ...this.recent.filter((r) => r.id !== id)].slice(0, 2);
  }

  private start(tenant: Tenant): void {
    if (tenant.running === 0) this.busy++;
    tenant.running++;
  }

  private leave(id: string, tenant: Tenant): void {
    tenant.running--;
    if (tenant.running === 0) this.busy--;
    const now = Date.now();
    while (tenant.waiting.length > 0 && this.mayRun(id, tenant, now)) {
      this.start(tenant);
      tenant.waiting.shift()!();
    }
    if (tenant.running === 0 && tenant.waiting.length === 0) this.tenants.delete(id);
  }
}

interface Tenant {
  running: number;
  waiting: Array<() => void>;
}

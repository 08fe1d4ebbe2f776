/**
 * Follows GET /commons/v1/events. EventSource cannot send the X-Api-Key header (and a key must never be put in a
 * URL), so the stream is read with fetch; it reconnects after a drop and resumes from the last event id.
 */
export interface LiveEvent {
  eventId: string;
  kind: string;
  status: string;
  detail?: string;
  date: string;
  message: any;
}

/** `onState(true)` comes each time the stream is (again) listening: read the current state then. */
export function follow(apiKey: string, onEvent: (e: LiveEvent) => void, onState?: (live: boolean) => void): () => void {
  let stopped = false;
  let lastId: string | null = null;
  let controller: AbortController | null = null;

  async function run(): Promise<void> {
    while (!stopped) {
      controller = new AbortController();
      try {
        const headers: Record<string, string> = { 'x-api-key': apiKey, accept: 'text/event-stream' };
        if (lastId) headers['last-event-id'] = lastId;
        const res = await fetch('/commons/v1/events', { headers, signal: controller.signal });
        // A key that is refused stays refused: no point asking again.
        if (res.status === 401 || res.status === 403) {
          onState?.(false);
          return;
        }
        if (!res.ok || !res.body) throw new Error(`event stream: ${res.status}`);
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            let event = 'message';
            let data = '';
            let id: string | null = null;
            for (const line of block.split('\n')) {
              if (line.startsWith('event: ')) event = line.slice(7);
              else if (line.startsWith('data: ')) data += line.slice(6);
              else if (line.startsWith('id: ')) id = line.slice(4);
            }
            if (id) lastId = id;
            if (event === 'message' && data) onEvent(JSON.parse(data) as LiveEvent);
            // Listening from here on: the page reads the current state again, so nothing falls between.
            else if (event === 'ready') onState?.(true);
          }
        }
      } catch {
        if (stopped) return;
      }
      onState?.(false);
      if (!stopped) await new Promise((r) => setTimeout(r, 3000));
    }
  }
  void run();
  return () => {
    stopped = true;
    controller?.abort();
  };
}

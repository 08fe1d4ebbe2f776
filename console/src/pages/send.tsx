import { useEffect, useState } from 'preact/hooks';
import { apiOf, post } from '../api.ts';
import { euros } from '../format.ts';
import { navigate } from '../router.ts';
import { useSession } from '../session.ts';
import { ErrorBox, Field, Page, useAction } from '../ui.tsx';

const LANGUAGES = ['fr-FR', 'en-GB', 'de-DE', 'es-ES'];

/** The quote of what is typed, asked again a moment after each change (the same count and price as the send). */
function useQuote(base: string, body: unknown, deps: unknown[]) {
  const [quote, setQuote] = useState<any>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const t = setTimeout(() => {
      post(`${base}/messages/quote`, body)
        .then((q) => {
          setQuote(q);
          setError(null);
        })
        .catch((e) => {
          setError(e);
        });
    }, 150);
    return () => clearTimeout(t);
  }, deps);
  return { quote, error };
}

export function Send() {
  const s = useSession();
  const type: string = s.channel.type;
  const base = apiOf(type);
  const [to, setTo] = useState('');
  const [text, setText] = useState('');
  const [from, setFrom] = useState('');
  const [refClient, setRefClient] = useState('');
  const [sentDate, setSentDate] = useState('');
  const [encoding, setEncoding] = useState('');
  const [stop, setStop] = useState(false);
  const [title, setTitle] = useState('');
  const [language, setLanguage] = useState('fr-FR');
  const [fallback, setFallback] = useState('');

  const quoteBody =
    type === 'SMS'
      ? { ...(to && { recipient: { to } }), body: { text, ...(encoding && { encoding }), stop } }
      : type === 'RCS'
        ? { ...(to && { recipient: { to } }), body: { type: 'TEXT', text } }
        : { ...(to && { recipient: { to } }) };
  const { quote, error: quoteError } = useQuote(base, quoteBody, [to, text, encoding, stop]);

  const send = useAction(async () => {
    const common = {
      recipient: { to },
      ...(from && { from }),
      ...(refClient && { refClient }),
      ...(sentDate && { sentDate: new Date(sentDate).toISOString() }),
    };
    const body =
      type === 'SMS'
        ? { ...common, body: { text, ...(encoding && { encoding }), ...(stop && { stop }) } }
        : type === 'RCS'
          ? { ...common, body: { type: 'TEXT', text }, ...(fallback && { fallback: { text: fallback } }) }
          : { ...common, body: { text, ...(title && { title }), language } };
    const m = await post(`${base}/messages`, body);
    navigate(`/messages/${m.messageId}`);
  });

  const senders: string[] = s.channel.fromFieldList ?? [];
  const t = quote?.body;
  return (
    <Page title={`Send ${type === 'VOICE' ? 'a voice message' : `an ${type} message`}`}>
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          void send.run();
        }}
      >
        <Field id="to" label="Recipient" hint="International (33612345678, +33 6 12 34 56 78) or national in the organisation's country">
          <input id="to" inputMode="tel" autoComplete="off" required value={to} onInput={(e) => setTo((e.target as HTMLInputElement).value)} />
        </Field>
        {type === 'VOICE' ? (
          <Field id="title" label="Title (spoken first)">
            <input id="title" maxLength={160} value={title} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} />
          </Field>
        ) : null}
        <Field id="text" label="Text">
          <textarea
            id="text"
            rows={5}
            required
            maxLength={type === 'VOICE' ? 160 : undefined}
            value={text}
            onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
            aria-describedby="counter"
          />
        </Field>
        <p id="counter" class="counter" aria-live="polite">
          {type === 'SMS' && t ? (
            <>
              <strong data-testid="parts">{t.messagePartCount}</strong> {t.messagePartCount === 1 ? 'part' : 'parts'} ·{' '}
              <span data-testid="length">{t.length}</span> {t.encoding === 'GSM7' ? 'GSM characters' : 'UCS-2 characters'} ({t.encoding}) ·{' '}
              {t.tooLong ? <span class="error-text">too long: at most 10 parts</span> : <>{t.remainingInPart} left in this part</>} ·{' '}
              {t.stop ? <span data-testid="stop-counted">STOP mention counted · </span> : null}
            </>
          ) : null}
          {type === 'RCS' && quote ? <>RCS {quote.price.kind} message · </> : null}
          {type === 'VOICE' && text ? <>{text.length} / 160 characters · </> : null}
          {quote ? (
            <span data-testid="price">
              {quote.price.amount !== undefined ? `Price: ${euros(quote.price.amount)}` : `Price: ${euros(quote.price.unitAmount)} per started 30 s of speech`}
              {quote.recipient && !quote.recipient.valid ? ' (not a valid number: not charged, it will end UNDELIVERABLE)' : ''}
            </span>
          ) : null}
          {quoteError && to ? <span class="error-text"> {(quoteError as any).detail}</span> : null}
        </p>
        {type === 'SMS' ? (
          <div class="row">
            <Field id="encoding" label="Encoding">
              <select id="encoding" value={encoding} onChange={(e) => setEncoding((e.target as HTMLSelectElement).value)}>
                <option value="">Automatic</option>
                <option value="GSM7">GSM 7-bit</option>
                <option value="UNICODE">Unicode (UCS-2)</option>
              </select>
            </Field>
            <div class="field check">
              <input id="stop" type="checkbox" checked={stop} onChange={(e) => setStop((e.target as HTMLInputElement).checked)} />
              <label for="stop">Add the STOP opt-out mention</label>
            </div>
          </div>
        ) : null}
        {type === 'VOICE' ? (
          <Field id="language" label="Language">
            <select id="language" value={language} onChange={(e) => setLanguage((e.target as HTMLSelectElement).value)}>
              {LANGUAGES.map((l) => (
                <option value={l}>{l}</option>
              ))}
            </select>
          </Field>
        ) : null}
        {type === 'RCS' ? (
          <Field id="fallback" label="SMS fallback text" hint="Sent as an SMS when the recipient cannot receive RCS (needs the channel's fallback SMS channel)">
            <input id="fallback" value={fallback} onInput={(e) => setFallback((e.target as HTMLInputElement).value)} />
          </Field>
        ) : null}
        <div class="row">
          <Field id="from" label="Sender" hint={senders.length ? undefined : "The channel's default when empty"}>
            {senders.length ? (
              <select id="from" value={from} onChange={(e) => setFrom((e.target as HTMLSelectElement).value)}>
                <option value="">Default{s.channel.defaultFromField ? ` (${s.channel.defaultFromField})` : ''}</option>
                {senders.map((f) => (
                  <option value={f}>{f}</option>
                ))}
              </select>
            ) : (
              <input id="from" maxLength={11} value={from} onInput={(e) => setFrom((e.target as HTMLInputElement).value)} />
            )}
          </Field>
          <Field id="ref" label="refClient">
            <input id="ref" maxLength={140} value={refClient} onInput={(e) => setRefClient((e.target as HTMLInputElement).value)} />
          </Field>
          <Field id="when" label="Send at" hint="Empty: now">
            <input id="when" type="datetime-local" value={sentDate} onInput={(e) => setSentDate((e.target as HTMLInputElement).value)} />
          </Field>
        </div>
        <button type="submit" disabled={send.busy}>
          {send.busy ? 'Sending…' : 'Send'}
        </button>
        <ErrorBox error={send.error} />
      </form>
      <details class="help">
        <summary>Simulator test numbers</summary>
        <p>
          With the embedded simulator a number ending in <code>0001</code> ends UNDELIVERED, <code>0002</code> is rejected (refunded), <code>0003</code> never
          gets a receipt, <code>0004</code> is retried once; any other is DELIVERED.
        </p>
      </details>
    </Page>
  );
}

import { useState } from 'preact/hooks';
import { carriesOptOutMention, optOutLine, optOutSettings } from '../../../src/domain/opt-out.ts';
import { type ParsedTemplate, parseTemplate, renderTemplate } from '../../../src/domain/templates.ts';
import { analyseText, exceedsPartLimit, MAX_MESSAGE_PARTS, PART_LIMITS } from '../../../src/domain/text-length.ts';
import { call, post } from '../api.ts';
import { when } from '../format.ts';
import { load, useSession } from '../session.ts';
import { Empty, ErrorBox, Field, Notice, Page, useAction, useLoad } from '../ui.tsx';

/** The channel's short links option: long URLs of its SMS replaced by tracked short links at accept. */
function ShortLinks({ channel }: { channel: any }) {
  const [on, setOn] = useState<boolean>(channel.shortLinks === true);
  const [saved, setSaved] = useState(false);
  const save = useAction(async () => {
    await call('PATCH', `/commons/v1/channels/${channel.channelId}`, { body: { shortLinks: on } });
    await load();
    setSaved(true);
  });
  return (
    <form
      class="form"
      aria-label="Short links"
      onSubmit={(e) => {
        e.preventDefault();
        setSaved(false);
        void save.run();
      }}
    >
      <h2>Short links</h2>
      <div class="field check">
        <input id="short-links" type="checkbox" checked={on} onChange={(e) => setOn((e.target as HTMLInputElement).checked)} />
        <label for="short-links">Replace long URLs with tracked short links</label>
      </div>
      <p class="hint">Each message gets links of its own; a click is recorded, shown on the message and sent to the status webhook as CLICKED.</p>
      <button type="submit" disabled={save.busy}>
        Save short links
      </button>
      <ErrorBox error={save.error} />
      {saved ? <Notice>{on ? 'Short links on.' : 'Short links off.'}</Notice> : null}
    </form>
  );
}

/** What a template's text gives once filled in, counted with the server's own rules (the STOP mention included). */
export function previewOf(
  text: string,
  values: Record<string, string>,
  mention: string | null,
): { parsed: ParsedTemplate | null; rendered?: string; error?: string; parts?: number; length?: number; encoding?: string; tooLong?: boolean } {
  let parsed: ParsedTemplate;
  try {
    parsed = parseTemplate(text);
  } catch (err) {
    return { parsed: null, error: (err as Error).message };
  }
  // Only the variables of the text: values typed for a variable since removed are not an error here.
  const own = Object.fromEntries(Object.entries(values).filter(([k, v]) => parsed.variables.includes(k) && v !== ''));
  let rendered: string;
  try {
    rendered = renderTemplate(parsed, own) + (mention ?? '');
  } catch (err) {
    return { parsed, error: (err as Error).message };
  }
  const a = analyseText(rendered);
  return { parsed, rendered, parts: a.messagePartCount, length: a.length, encoding: a.encoding, tooLong: exceedsPartLimit(a) };
}

function Editor({ channel, organisation, template, onDone }: { channel: any; organisation: any; template: any | null; onDone: () => void }) {
  const [name, setName] = useState<string>(template?.name ?? '');
  const [text, setText] = useState<string>(template?.text ?? '');
  const [values, setValues] = useState<Record<string, string>>({});
  const [french, setFrench] = useState(true);
  const base = `/sms/v1/channels/${channel.channelId}/templates`;
  const save = useAction(async () => {
    if (template) await call('PATCH', `${base}/${template.templateId}`, { body: { name, text } });
    else await post(base, { name, text });
    onDone();
  });
  const settings = optOutSettings(organisation?.optOut?.shortCode ?? null, organisation?.optOut?.text ?? null);
  const mention = carriesOptOutMention(undefined, channel.flow, french ? 'FR' : null) ? optOutLine(settings) : null;
  const p = previewOf(text, values, mention);
  const limits = p.encoding === 'UNICODE' ? PART_LIMITS.UNICODE : PART_LIMITS.GSM7;
  return (
    <form
      class="form"
      aria-label={template ? `Edit template ${template.name}` : 'New template'}
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      <h2>{template ? `Edit ${template.name}` : 'New template'}</h2>
      <Field id="t-name" label="Template name">
        <input id="t-name" required maxLength={100} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      </Field>
      <Field id="t-text" label="Template text" hint="{{firstName}} is filled in per recipient; {{firstName|there}} has a default; \{{ writes {{">
        <textarea id="t-text" rows={4} required maxLength={5000} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
      </Field>
      <fieldset class="preview" aria-label="Preview">
        <legend>Preview</legend>
        {(p.parsed?.variables ?? []).map((v) => (
          <Field id={`t-value-${v}`} label={`Value of ${v}`}>
            <input id={`t-value-${v}`} value={values[v] ?? ''} onInput={(e) => setValues({ ...values, [v]: (e.target as HTMLInputElement).value })} />
          </Field>
        ))}
        {channel.flow === 'MARKETING' ? (
          <div class="field check">
            <input id="t-french" type="checkbox" checked={french} onChange={(e) => setFrench((e.target as HTMLInputElement).checked)} />
            <label for="t-french">To a French number (the STOP mention is added)</label>
          </div>
        ) : null}
        {p.error ? (
          <p class="error-text" data-testid="preview-error">
            {p.error}
          </p>
        ) : null}
        {p.rendered !== undefined ? (
          <>
            <p class="body-text" data-testid="preview-text">
              {p.rendered}
            </p>
            <p class="counter" aria-live="polite">
              <strong data-testid="preview-parts">{p.parts}</strong> {p.parts === 1 ? 'part' : 'parts'} · <span data-testid="preview-length">{p.length}</span>{' '}
              {p.encoding === 'GSM7' ? 'GSM characters' : 'UCS-2 characters'} ({p.encoding}) · at most {limits.single} in one part, {limits.multi} a part beyond
              {p.tooLong ? <span class="error-text"> · too long: at most {MAX_MESSAGE_PARTS} parts</span> : null}
              {mention ? <span data-testid="preview-stop"> · STOP mention counted</span> : null}
            </p>
            {channel.shortLinks ? <p class="hint">Long URLs become short links when sent: the count of a send is that of the shortened text.</p> : null}
          </>
        ) : null}
      </fieldset>
      <div class="row">
        <button type="submit" disabled={save.busy}>
          {template ? 'Save template' : 'Create template'}
        </button>
        {template ? (
          <button type="button" class="link" onClick={onDone}>
            Cancel
          </button>
        ) : null}
      </div>
      <ErrorBox error={save.error} />
    </form>
  );
}

/** An SMS channel's named templates (list, create, edit, delete, previewed as sent) and its short links option. */
export function Templates() {
  const s = useSession();
  const channel = s.channel;
  const base = `/sms/v1/channels/${channel.channelId}/templates`;
  const list = useLoad(() => (channel.type === 'SMS' ? call('GET', base) : Promise.resolve({ items: [] })), [channel.channelId]);
  const [editing, setEditing] = useState<any | null>(null);
  const [fresh, setFresh] = useState(0);
  const remove = useAction(async (t: any) => {
    if (!confirm(`Delete the template ${t.name}?`)) return;
    await call('DELETE', `${base}/${t.templateId}`);
    if (editing?.templateId === t.templateId) setEditing(null);
    list.reload();
  });
  if (channel.type !== 'SMS') {
    return (
      <Page title="Templates">
        <Empty>Templates and short links are for SMS channels.</Empty>
      </Page>
    );
  }
  const items: any[] = list.data?.items ?? [];
  const done = () => {
    setEditing(null);
    setFresh((n) => n + 1);
    list.reload();
  };
  return (
    <Page title="Templates">
      <ErrorBox error={list.error ?? remove.error} />
      {items.length === 0 && list.data ? <Empty>No template yet: a send names one by id with values instead of a text.</Empty> : null}
      {items.length > 0 ? (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Text</th>
                <th scope="col">Variables</th>
                <th scope="col">Changed</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((t) => (
                <tr data-template-id={t.templateId}>
                  <td>{t.name}</td>
                  <td class="body-text">{t.text}</td>
                  <td>{t.variables.join(', ') || '—'}</td>
                  <td>{when(t.updateDate)}</td>
                  <td>
                    <button type="button" class="small" onClick={() => setEditing(t)}>
                      Edit
                    </button>{' '}
                    <button type="button" class="small danger" onClick={() => void remove.run(t)} disabled={remove.busy}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <Editor key={editing?.templateId ?? `new-${fresh}`} channel={channel} organisation={s.organisation} template={editing} onDone={done} />
      <ShortLinks channel={channel} />
    </Page>
  );
}

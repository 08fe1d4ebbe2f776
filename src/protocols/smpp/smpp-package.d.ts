// Minimal types for the parts of the untyped `smpp` 0.5.1 package that Tern uses: its PDU encoder and definition
// tables (server side), and its Session as an interop peer in tests.
declare module 'smpp' {
  import { EventEmitter } from 'node:events';
  import type { Socket } from 'node:net';

  namespace smpp {
    /** A codec for one field type; the raw decoder compares these objects by identity. */
    interface FieldType {
      read(buffer: Buffer, offset: number, length?: number): unknown;
      write(value: unknown, buffer: Buffer, offset: number): void;
      size(value: unknown): number;
      default: unknown;
    }

    /** Turns a field's value into what its type writes (a Date into SMPP time, text into bytes, …). */
    interface FieldFilter {
      encode(this: Record<string, unknown>, value: unknown, skipUdh?: unknown): unknown;
    }

    interface ParamDef {
      type: FieldType;
      default?: unknown;
      filter?: FieldFilter;
    }

    interface CommandDef {
      id: number;
      command: string;
      params?: Record<string, ParamDef>;
      tlvMap?: Record<string, string>;
    }

    interface TlvDef {
      id: number;
      tag: string;
      type: FieldType;
      multiple?: boolean;
      filter?: FieldFilter;
    }

    class PDU {
      constructor(command: string, options?: Record<string, unknown>);
      command: string;
      command_id: number;
      command_status: number;
      command_length: number;
      sequence_number: number;
      [field: string]: unknown;
      isResponse(): boolean;
      response(options?: Record<string, unknown>): PDU;
      toBuffer(): Buffer;
      static maxLength: number;
    }

    type ResponseCallback = (pdu: PDU) => void;
    type Shortcut = {
      (options: Record<string, unknown>, responseCallback?: ResponseCallback, sendCallback?: ResponseCallback): boolean;
      (responseCallback?: ResponseCallback): boolean;
    };

    class Session extends EventEmitter {
      constructor(options: { socket?: Socket; [key: string]: unknown });
      socket: Socket;
      send(pdu: PDU, responseCallback?: ResponseCallback, sendCallback?: ResponseCallback): boolean;
      pause(): void;
      resume(): void;
      close(callback?: () => void): void;
      destroy(callback?: () => void): void;
      bind_transmitter: Shortcut;
      bind_receiver: Shortcut;
      bind_transceiver: Shortcut;
      submit_sm: Shortcut;
      submit_multi: Shortcut;
      deliver_sm: Shortcut;
      query_sm: Shortcut;
      cancel_sm: Shortcut;
      replace_sm: Shortcut;
      enquire_link: Shortcut;
      unbind: Shortcut;
      data_sm: Shortcut;
    }

    const commands: Record<string, CommandDef>;
    const commandsById: Record<number, CommandDef>;
    const tlvs: Record<string, TlvDef>;
    const tlvsById: Record<number, TlvDef>;
    const errors: Record<string, number>;
    const types: {
      int8: FieldType;
      int16: FieldType;
      int32: FieldType;
      string: FieldType;
      cstring: FieldType;
      buffer: FieldType;
      dest_address_array: FieldType;
      unsuccess_sme_array: FieldType;
      tlv: {
        int8: FieldType;
        int16: FieldType;
        int32: FieldType;
        string: FieldType;
        cstring: FieldType;
        buffer: FieldType;
      };
    };

    class Server extends EventEmitter {
      sessions: Session[];
      listen(port: number, host?: string, callback?: () => void): this;
      close(callback?: (err?: Error) => void): this;
      address(): import('node:net').AddressInfo | string | null;
    }

    function createServer(options: { key?: Buffer; cert?: Buffer; [key: string]: unknown }, listener?: (session: Session) => void): Server;

    function connect(options: { host?: string; port?: number; url?: string; tls?: boolean; [key: string]: unknown }, listener?: () => void): Session;
  }

  export = smpp;
}

/**
 * The contract check: every response the tests receive from the service is held against the
 * OpenAPI document (path, method, status, required headers, content type, body schema; each event
 * of a stream), so that a route answering something the document does not describe fails a test.
 * `contract-setup.ts` feeds it every fetch to an origin of the service (`serviceAt`, which the
 * stack helpers call); the SSE test client feeds it its streams. Violations are
 * collected and thrown after each test (and after each file).
 */
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { SseParser } from '@pos/shared/clients/sse-parser';
import { loadConfig } from '@pos/shared/config';
import { buildOpenApiDocument } from '@pos/shared/openapi/document';
import { addFormats as addServiceFormats } from '@pos/shared/schemas/text';

type Json = Record<string, any>;

const { basePath, bodyLimitBytes } = loadConfig({}).http;
export const contractDocument = buildOpenApiDocument({ basePath, version: 'contract', bodyLimitBytes }) as Json;

const DOCUMENT_ID = 'openapi.json';
const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
addFormats(ajv);
// the service's own text formats, which a menu's answer carries as its upload did
addServiceFormats(ajv as never);
ajv.addSchema(contractDocument, DOCUMENT_ID);

/** Bull Board's own pages, assets and JSON API: only its admin check (the 401) is this contract's. */
const MOUNTED_BOARD = '/admin/queues/';

const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** Path templates, literal ones first (as OpenAPI matches them), each with its matcher. */
const templates = Object.keys(contractDocument.paths as Json)
  .map((template) => ({
    template,
    regex: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
    params: (template.match(/\{/g) ?? []).length,
  }))
  .sort((a, b) => a.params - b.params);

function pathTemplate(pathname: string): string | undefined {
  return templates.find((t) => t.regex.test(pathname))?.template;
}

/** A response object (following a $ref) and the JSON pointer where it lives. */
function resolveResponse(value: Json, pointer: string): { response: Json; pointer: string } {
  const target = value.$ref as string | undefined;
  if (!target) return { response: value, pointer };
  const path = target.slice(1);
  const response = path
    .split('/')
    .slice(1)
    .reduce((node: Json, key) => node[key.replace(/~1/g, '/').replace(/~0/g, '~')], contractDocument);
  return { response, pointer: path };
}

function validate(pointer: string, value: unknown): string | undefined {
  const validator = ajv.getSchema(`${DOCUMENT_ID}#${pointer}`);
  if (!validator) return `no schema at ${pointer}`;
  if (validator(value)) return undefined;
  return ajv.errorsText(validator.errors, { dataVar: 'body' });
}

/** What a response is held against, or the violation that it has no place in the document. */
interface Expectation {
  response: Json;
  pointer: string;
}

export interface ResponseHead {
  method: string;
  url: URL;
  status: number;
  header(name: string): string | null;
}

function documentedMethods(template: string): string[] {
  return Object.keys(contractDocument.paths[template] as Json).map((m) => m.toUpperCase());
}

function expectationFor(head: ResponseHead, problems: { push(problem: string): void }): Expectation | undefined {
  const { pathname } = head.url;
  const template = pathTemplate(pathname);
  if (!template) {
    if (head.status !== 404)
      problems.push(`an undocumented path answered ${head.status} (unknown paths must answer 404)`);
    return resolveResponse({ $ref: '#/components/responses/UnknownRoute' }, '');
  }
  const item = contractDocument.paths[template] as Json;
  const method = head.method === 'HEAD' && !item.head ? 'get' : head.method.toLowerCase();
  const operation = item[method] as Json | undefined;
  if (!operation) {
    if (head.status !== 405) problems.push(`a method the path does not list answered ${head.status} (expected 405)`);
    const allowed = new Set(documentedMethods(template));
    if (allowed.has('GET')) allowed.add('HEAD');
    const allow = new Set(
      (head.header('allow') ?? '')
        .split(',')
        .map((m) => m.trim())
        .filter(Boolean),
    );
    if ([...allowed].some((m) => !allow.has(m)) || [...allow].some((m) => !allowed.has(m))) {
      problems.push(`Allow is "${head.header('allow')}", the document lists ${[...allowed].join(', ')}`);
    }
    return resolveResponse({ $ref: '#/components/responses/MethodNotAllowed' }, '');
  }
  const listed = (operation.responses as Json)[String(head.status)] as Json | undefined;
  if (!listed) {
    problems.push(
      `status ${head.status} is not among the documented ${Object.keys(operation.responses as Json).join(', ')}`,
    );
    return undefined;
  }
  return resolveResponse(listed, `/paths/${escapePointer(template)}/${method}/responses/${head.status}`);
}

const baseType = (contentType: string | null) => (contentType ?? '').split(';')[0]!.trim().toLowerCase();
const isJson = (type: string) => type === 'application/json' || type.endsWith('+json');

/** Reads one response as it arrives: `chunk` for each piece of the body, `end` when it is complete. */
export class ResponseCheck {
  /** Each violation as it is found (a stream's may come long before its end, or without one). */
  private readonly problems = { push: (problem: string) => this.report(`${this.what}: ${problem}`) };
  private expectation: Expectation | undefined;
  private mediaPointer: string | undefined;
  private mediaType = '';
  private body = '';
  /** The document has no body for this answer: none may come. */
  private expectEmpty = false;
  private parser: SseParser | undefined;
  private readonly what: string;
  private readonly bodyless: boolean;

  constructor(
    head: ResponseHead,
    private readonly report: (violation: string) => void,
  ) {
    this.what = `${head.method} ${head.url.pathname} → ${head.status}`;
    this.bodyless = head.method === 'HEAD' || head.status === 204 || head.status === 304;
    if (head.url.pathname.startsWith(MOUNTED_BOARD)) {
      if (head.status === 401)
        this.expectation = resolveResponse({ $ref: '#/components/responses/BoardUnauthorized' }, '');
      else return; // the board's own answer
    } else {
      this.expectation = expectationFor(head, this.problems);
    }
    if (!this.expectation) return;
    const { response, pointer } = this.expectation;
    for (const [name, header] of Object.entries((response.headers ?? {}) as Json)) {
      const required = resolveHeader(header as Json).required === true;
      if (required && head.header(name) === null)
        this.problems.push(`header ${name} is documented as required but absent`);
    }
    const content = response.content as Json | undefined;
    this.mediaType = baseType(head.header('content-type'));
    if (!content) {
      this.expectEmpty = true;
      return;
    }
    if (this.bodyless) return;
    if (!content[this.mediaType]) {
      this.problems.push(
        `content type "${head.header('content-type')}" is not among the documented ${Object.keys(content).join(', ')}`,
      );
      return;
    }
    this.mediaPointer = `${pointer}/content/${escapePointer(this.mediaType)}/schema`;
    if (this.mediaType === 'text/event-stream') {
      this.parser = new SseParser({ onEvent: (event) => this.event(event) });
    }
  }

  chunk(text: string): void {
    if (this.parser) this.parser.feed(text);
    else this.body += text;
  }

  end(): void {
    if (this.expectEmpty && this.body !== '' && !this.bodyless)
      this.problems.push(`a body where the document has none: ${this.body.slice(0, 200)}`);
    if (!this.mediaPointer || this.parser || this.bodyless) return;
    if (!/^(text\/|application\/json|.*\+json$)/.test(this.mediaType)) return; // binary: not read
    let value: unknown = this.body;
    if (isJson(this.mediaType)) {
      try {
        value = JSON.parse(this.body);
      } catch {
        this.problems.push(`the ${this.mediaType} body is not JSON: ${this.body.slice(0, 200)}`);
        return;
      }
    }
    const error = validate(this.mediaPointer, value);
    if (error) this.problems.push(`body does not match the schema: ${error}; body: ${this.body.slice(0, 300)}`);
  }

  /** An event of a stream: the documented item schema, and its data against the record schema. */
  private event(event: { event: string; id: string; data: string }): void {
    const items = `${this.mediaPointer}/contentSchema/items`;
    const variants = ((resolvePointer(items) as Json).oneOf ?? []) as Json[];
    const variant = variants
      .map((v) => (v.$ref as string).slice(1))
      .find((p) => (resolvePointer(p) as Json).properties?.event?.const === event.event);
    if (!variant) {
      this.problems.push(`event "${event.event}" is not documented`);
      return;
    }
    const shape = validate(variant, { event: event.event, id: event.id, data: event.data });
    if (shape) this.problems.push(`event "${event.event}" (id ${event.id}) does not match: ${shape}`);
    let data: unknown;
    try {
      data = JSON.parse(event.data);
    } catch {
      this.problems.push(`event "${event.event}" data is not JSON: ${event.data.slice(0, 200)}`);
      return;
    }
    const error = validate(`${variant}/properties/data/contentSchema`, data);
    if (error) this.problems.push(`event "${event.event}" data does not match its record: ${error}`);
  }
}

function resolvePointer(pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .reduce((node: Json, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], contractDocument);
}

function resolveHeader(header: Json): Json {
  return header.$ref ? (resolvePointer((header.$ref as string).slice(1)) as Json) : header;
}

// ---- what the test run saw ----

const violations: string[] = [];
const pending = new Set<Promise<unknown>>();

const serviceOrigins = new Set<string>();

/**
 * Names an origin where the service answers (a test stack, a spawned API node, the demo): its
 * answers are checked from then on. Fake servers that stand in for the service are not.
 */
export function serviceAt(origin: string): void {
  serviceOrigins.add(new URL(origin).origin);
}

export function isServiceUrl(url: URL): boolean {
  return serviceOrigins.has(url.origin);
}

/** Starts checking a response: feed it the body with `chunk`, and call `end` once it is complete. */
export function observe(head: ResponseHead): ResponseCheck {
  return new ResponseCheck(head, (violation) => violations.push(violation));
}

/** Keeps the test from finishing before a check that is still reading. */
export function track(promise: Promise<unknown>): void {
  const tracked = promise.catch(() => undefined).finally(() => pending.delete(tracked));
  pending.add(tracked);
}

/** Waits for the checks under way; returns and forgets the violations seen so far. */
export async function takeViolations(): Promise<string[]> {
  while (pending.size > 0) await Promise.all([...pending]);
  return violations.splice(0);
}

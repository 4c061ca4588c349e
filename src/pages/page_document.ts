/**
 * PageDocument version 1 (spec §2): the one source of the product overview and the
 * developer reference, rendered as JSON, HTML and Markdown. Objects are strict so that a
 * typo in an operator-edited template stops start-up instead of vanishing silently.
 */
import * as v from "valibot";

export type Inline = string | LinkInline | StrongInline;
export interface LinkInline {
  readonly type: "link";
  readonly href: string;
  readonly children: readonly Inline[];
}
export interface StrongInline {
  readonly type: "strong";
  readonly children: readonly Inline[];
}

export type Block =
  | HeadingBlock
  | ParagraphBlock
  | QuoteBlock
  | ListBlock
  | ExampleBlock
  | CodeBlock;
export interface HeadingBlock {
  readonly type: "heading";
  readonly level: 2 | 3;
  readonly text: string;
  readonly id?: string;
}
export interface ParagraphBlock {
  readonly type: "paragraph";
  readonly content: readonly Inline[];
}
export interface QuoteBlock {
  readonly type: "quote";
  readonly content: readonly Inline[];
}
export interface ListBlock {
  readonly type: "list";
  readonly ordered: boolean;
  readonly items: readonly (readonly Inline[])[];
}
export interface ExampleBlock {
  readonly type: "example";
  readonly title: string;
  readonly content: readonly Block[];
}
export interface CodeBlock {
  readonly type: "code";
  readonly language: string;
  readonly text: string;
}

const UriSchema = v.pipe(v.string(), v.url("must be an absolute URI"));

const _inlines = v.array(v.lazy(() => InlineSchema));

export const InlineSchema: v.GenericSchema<Inline> = v.pipe(
  v.union([
    v.string(),
    v.variant("type", [
      v.strictObject({ type: v.literal("link"), href: UriSchema, children: _inlines }),
      v.strictObject({ type: v.literal("strong"), children: _inlines }),
    ]),
  ], "must be a string or an object of type link or strong"),
  v.description("Inline content: plain text, a link, or strong (emphasised) text."),
);

export const BlockSchema: v.GenericSchema<Block> = v.pipe(
  v.variant("type", [
    v.strictObject({
      type: v.literal("heading"),
      level: v.picklist([2, 3], "must be 2 or 3"),
      text: v.string(),
      // Used as an HTML fragment identifier, so kept to characters that need no escaping.
      id: v.exactOptional(
        v.pipe(v.string(), v.regex(/^[a-z][a-z0-9-]*$/, "must match [a-z][a-z0-9-]*")),
      ),
    }),
    v.strictObject({ type: v.literal("paragraph"), content: _inlines }),
    v.strictObject({ type: v.literal("quote"), content: _inlines }),
    v.strictObject({ type: v.literal("list"), ordered: v.boolean(), items: v.array(_inlines) }),
    v.strictObject({
      type: v.literal("example"),
      title: v.string(),
      content: v.array(v.lazy(() => BlockSchema)),
    }),
    v.strictObject({ type: v.literal("code"), language: v.string(), text: v.string() }),
  ]),
  v.description("A block of page content, discriminated by `type`."),
);

export const PageLinksSchema = v.strictObject({
  html: UriSchema,
  markdown: UriSchema,
  json: UriSchema,
  agentInstructions: UriSchema,
});

export const PageDocumentSchema = v.pipe(
  v.strictObject({
    version: v.literal(1),
    kind: v.literal("page"),
    url: v.pipe(UriSchema, v.description("Canonical address of the page (its HTML form).")),
    title: v.string(),
    description: v.string(),
    content: v.array(BlockSchema),
    links: v.pipe(
      PageLinksSchema,
      v.description(
        "Absolute addresses of the page's HTML, Markdown and JSON forms and of the agent instructions.",
      ),
    ),
  }),
  v.description("A typed page document, version 1."),
);
export type PageDocument = v.InferOutput<typeof PageDocumentSchema>;

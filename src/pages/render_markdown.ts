/**
 * PageDocument -> CommonMark. Text is escaped so that it reads back as the same text, link
 * destinations are wrapped in `<…>`, and hrefs with a scheme we do not link lose the link.
 */
import { safeHref } from "../ui/html.ts";
import type { Block, Inline, PageDocument } from "./page_document.ts";

export function renderPageMarkdown(document: PageDocument): string {
  const parts = [
    `# ${escapeMarkdown(document.title)}`,
    _escapeLineStart(escapeMarkdown(document.description)),
    ...document.content.map(_block),
    "---",
    `Forms of this page: [HTML](${_destination(document.links.html)}), ` +
    `[JSON](${_destination(document.links.json)}). ` +
    `Agent instructions: [llms.txt](${_destination(document.links.agentInstructions)}).`,
  ];
  return parts.join("\n\n") + "\n";
}

/** Backslash-escapes every character CommonMark could read as inline markup. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_[\]<>&~]/g, "\\$&").replace(/\r?\n/g, " ");
}

export function renderInlinesMarkdown(inlines: readonly Inline[]): string {
  return inlines.map(_inline).join("");
}

function _block(block: Block): string {
  switch (block.type) {
    case "heading":
      return `${"#".repeat(block.level)} ${escapeMarkdown(block.text)}`;
    case "paragraph":
      return _escapeLineStart(renderInlinesMarkdown(block.content));
    case "quote":
      return `> ${_escapeLineStart(renderInlinesMarkdown(block.content))}`;
    case "list":
      return block.items.map((item, i) =>
        `${block.ordered ? `${i + 1}.` : "-"} ${_escapeLineStart(renderInlinesMarkdown(item))}`
      ).join("\n");
    case "example":
      // Fenced off by a labelled quote so the example's own blocks stay whole.
      return [`> **${escapeMarkdown(block.title)}**`, ...block.content.map(_block)]
        .join("\n\n")
        .split("\n")
        .map((line, i) => i === 0 ? line : line === "" ? ">" : `> ${line}`)
        .join("\n");
    case "code": {
      // The fence is longer than any backtick run inside, so the text cannot close it.
      const longest = Math.max(2, ...[...block.text.matchAll(/`+/g)].map((m) => m[0].length));
      const fence = "`".repeat(longest + 1);
      const info = block.language.replace(/[^A-Za-z0-9_+.-]/g, "");
      return `${fence}${info}\n${block.text.replace(/\n$/, "")}\n${fence}`;
    }
  }
}

function _inline(inline: Inline): string {
  if (typeof inline === "string") return escapeMarkdown(inline);
  const children = renderInlinesMarkdown(inline.children);
  if (inline.type === "strong") return children === "" ? "" : `**${children}**`;
  const href = safeHref(inline.href);
  return href === null ? children : `[${children}](${_destination(href)})`;
}

/** `<…>` destinations allow any character but `<`, `>` and line breaks, which we percent-encode. */
function _destination(href: string): string {
  return `<${href.replace(/[<>\s]/g, (c) => encodeURIComponent(c))}>`;
}

/** A paragraph starting like a heading, list item, rule or block quote would become one. */
function _escapeLineStart(text: string): string {
  const trimmed = text.trimStart();
  const ordered = /^(\d{1,9})([.)])/.exec(trimmed);
  if (ordered) return `${ordered[1]}\\${ordered[2]}${trimmed.slice(ordered[0].length)}`;
  return /^[#>+=-]/.test(trimmed) ? `\\${trimmed}` : trimmed;
}

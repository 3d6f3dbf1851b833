/**
 * What the docs checker reads of a Markdown file: the anchors it offers (headings slugged as
 * GitHub slugs them, and HTML `id`/`name` anchors) and the links it makes, with their lines.
 */
import GithubSlugger from 'github-slugger';
import MarkdownIt from 'markdown-it';

export interface MarkdownLink {
  href: string;
  /** 1-based line of the paragraph, heading or table row that holds the link. */
  line: number;
}

export interface MarkdownHeading {
  text: string;
  slug: string;
  depth: number;
  line: number;
}

/** A numbered list item and the heading it sits under (the register interface's rules). */
export interface NumberedItem {
  number: number;
  heading: MarkdownHeading | undefined;
  line: number;
}

export interface MarkdownOutline {
  headings: MarkdownHeading[];
  /** Every `#fragment` that lands somewhere in the file. */
  anchors: Set<string>;
  links: MarkdownLink[];
  numberedItems: NumberedItem[];
}

// html: anchors and links written as HTML count too; no linkify: a bare URL is not a link to check.
const parser = new MarkdownIt({ html: true, linkify: false });

const HTML_ANCHOR = /<a\s[^>]*?\b(?:id|name)\s*=\s*["']([^"']+)["']/gi;
const HTML_LINK = /<(?:a|img)\s[^>]*?\b(?:href|src)\s*=\s*["']([^"']+)["']/gi;

export function outlineOf(source: string): MarkdownOutline {
  const tokens = parser.parse(source, {});
  // One slugger per document: a repeated heading gets -1, -2, as on GitHub.
  const slugger = new GithubSlugger();
  const outline: MarkdownOutline = { headings: [], anchors: new Set(), links: [], numberedItems: [] };
  let lastHeading: MarkdownHeading | undefined;
  const html = (content: string, line: number) => {
    for (const match of content.matchAll(HTML_ANCHOR)) outline.anchors.add(match[1]!);
    for (const match of content.matchAll(HTML_LINK)) outline.links.push({ href: match[1]!, line });
  };

  tokens.forEach((token, i) => {
    const line = (token.map?.[0] ?? 0) + 1;
    if (token.type === 'heading_open') {
      const inline = tokens[i + 1];
      // GitHub slugs the heading's text: code spans keep their text, markup goes.
      const text = (inline?.children ?? [])
        .filter((child) => child.type === 'text' || child.type === 'code_inline')
        .map((child) => child.content)
        .join('');
      lastHeading = { text, slug: slugger.slug(text), depth: Number(token.tag.slice(1)), line };
      outline.headings.push(lastHeading);
      outline.anchors.add(lastHeading.slug);
    } else if (token.type === 'list_item_open' && /^[0-9]+$/.test(token.info)) {
      outline.numberedItems.push({ number: Number(token.info), heading: lastHeading, line });
    } else if (token.type === 'html_block') {
      html(token.content, line);
    } else if (token.type === 'inline') {
      for (const child of token.children ?? []) {
        if (child.type === 'link_open') outline.links.push({ href: String(child.attrGet('href') ?? ''), line });
        else if (child.type === 'image') outline.links.push({ href: String(child.attrGet('src') ?? ''), line });
        else if (child.type === 'html_inline') html(child.content, line);
      }
    }
  });
  return outline;
}

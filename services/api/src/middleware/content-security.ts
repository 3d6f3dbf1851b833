/**
 * The Content-Security-Policy of each page the service serves: every one loads from its own
 * origin only (no CDN, no font host: an operator page of a back-office service calls out to no
 * third party, and offline it does not wait), is framed by none, posts no form elsewhere. They
 * differ only where a page's own code needs it: Swagger UI and Bull Board style elements inline
 * and draw icons from data: URLs, and Bull Board resolves its assets against a `<base>`.
 */
const SAME_ORIGIN = ["default-src 'self'", "object-src 'none'", "form-action 'none'", "frame-ancestors 'none'"];
const INLINE_STYLES = ["style-src 'self' 'unsafe-inline'", "img-src 'self' data:"];

export const PAGE_CSP = {
  board: [...SAME_ORIGIN.slice(0, 1), "base-uri 'none'", ...SAME_ORIGIN.slice(1)].join('; '),
  docs: [...SAME_ORIGIN, "base-uri 'none'", ...INLINE_STYLES].join('; '),
  bullBoard: [...SAME_ORIGIN, "base-uri 'self'", ...INLINE_STYLES].join('; '),
} as const;

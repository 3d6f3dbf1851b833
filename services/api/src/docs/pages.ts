/**
 * The two HTML pages of the service: the landing page at `/` and the API docs at `/docs`.
 * No inline script (the docs page's own script is a file beside Swagger UI's), no secrets,
 * nothing that needs a token to render.
 */
import type { ServiceInfo } from '../service-info';

/** Text for HTML content or a quoted attribute value. */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);

/** Starts Swagger UI on the document named by the page; no online validator, no "try it out" by default. */
export const DOCS_SCRIPT = {
  name: 'docs.js',
  source: `window.addEventListener('load', function () {
  var root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: root.getAttribute('data-document'),
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`,
};

export function docsPage(info: ServiceInfo, documentUrl: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(info.name)} ${escapeHtml(info.version)}: API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="/docs/favicon-16x16.png" sizes="16x16">
</head>
<body>
<div id="swagger-ui" data-document="${escapeHtml(documentUrl)}"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/${DOCS_SCRIPT.name}"></script>
</body>
</html>
`;
}

export interface Link {
  href: string;
  text: string;
  note: string;
}

export function landingPage(info: ServiceInfo, links: Link[]): string {
  const items = links
    .map((link) => `<li><a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a>: ${escapeHtml(link.note)}</li>`)
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(info.name)}</title>
</head>
<body>
<h1>${escapeHtml(info.name)}</h1>
<p>Version ${escapeHtml(info.version)}</p>
<ul>
${items}
</ul>
</body>
</html>
`;
}

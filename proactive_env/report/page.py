"""The one HTML shell every page uses: self-contained (inline style, no scripts, no fetches)."""

from __future__ import annotations

import html

STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #222; max-width: 1800px; }
h1 { font-size: 22px; margin: 0 0 6px; } h2 { font-size: 17px; margin: 22px 0 8px; } h3 { font-size: 15px; }
table { border-collapse: collapse; margin: 6px 0 14px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d8d8d8; padding: 3px 8px; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
tr.reported td { background: #fff8e5; font-style: italic; }
td.text, th.text { text-align: left; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
.meta { color: #555; font-size: 13px; } .plots img { max-width: 48%; vertical-align: top; }
table.log td, table.log th { text-align: left; font-size: 12.5px; } table.log tr.trust td { color: #555; }
.split { display: grid; grid-template-columns: minmax(0, 2fr) minmax(320px, 1fr); gap: 18px; }
aside .transcript { max-height: 92vh; overflow: auto; position: sticky; top: 8px; }
.turn { border-left: 4px solid #ccc; margin: 0 0 10px; padding: 4px 8px; background: #fafafa; }
.turn.assistant { border-color: #4c72b0; } .turn.user { border-color: #2ca02c; } .turn.tool { border-color: #e69f00; }
.turn.system { border-color: #999; } .role { font-weight: 600; font-size: 12px; text-transform: uppercase; color: #555; }
pre { white-space: pre-wrap; word-wrap: break-word; margin: 4px 0; font: 12.5px/1.4 ui-monospace, monospace; }
.call pre { background: #f0f0f0; padding: 4px; }
"""


def page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<link rel='icon' href='data:,'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n")

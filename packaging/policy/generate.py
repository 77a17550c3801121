"""Generate the IT policy templates from desktop.policy (its schema: the single source).

Writes, into OUT (default: packaging/policy/build):
- EdgeDesk.admx and en-US/EdgeDesk.adml  (Windows Group Policy templates)
- org.edgedesk.EdgeDesk.mobileconfig     (macOS configuration profile, forced prefs)
- policy.example.json                    (Linux /etc/edgedesk/policy.json)

Run: python packaging/policy/generate.py [OUT]
"""

from __future__ import annotations

import json
import plistlib
import sys
import uuid
from pathlib import Path
from xml.sax.saxutils import escape

from desktop.policy import KEYS, MACOS_BUNDLE_ID, WINDOWS_POLICY_KEY, PolicyKey

NAMESPACE = "EdgeDesk.Policies"
EXAMPLE = {
    "ForceOffline": True,
    "AllowDownloads": False,
    "AllowedModels": ["glm-4-9b-0414", "bge-m3"],
    "HubEndpoint": "https://hf-mirror.corp.example/",
    "SharedModelsDir": "/opt/edgedesk/models",
    "ServerAllowed": True,
    "ServerBindAddress": "127.0.0.1",
    "ServerPort": 8765,
    "ServerRequireKey": True,
    "ServerAllowedOrigins": [],
    "RetentionDays": 30,
    "CollectUsage": True,
    "EphemeralOnly": False,
    "EncryptAtRest": True,
    "MaxKeyLifetimeDays": 90,
    "AuditLog": True,
    "AuditLogPath": "/var/log/edgedesk-audit",
    "DataLocation": "/srv/edgedesk-data",
    "MaxParallel": 4,
    "RemoteEndpoints": ["gpu=https://llm.corp.example/v1"],
    "AllowUserRemotes": False,
    "CaBundle": "/etc/ssl/corp-root.pem",
    "Proxy": "http://proxy.corp.example:3128",
    "McpServers": ["time=uvx mcp-server-time", "wiki=https://wiki.corp.example/mcp"],
    "AllowUserMcp": False,
    "McpRequireApproval": True,
    "ImageMaxMB": 10,
    "ImageMaxMegapixels": 24,
}


def _admx_element(key: PolicyKey) -> str:
    if key.type == "bool":
        return ""
    if key.type == "int":
        low, high = key.minimum or 0, key.maximum or 2147483647
        return (
            f'<elements><decimal id="{key.name}" valueName="{key.name}" '
            f'minValue="{low}" maxValue="{high}"/></elements>'
        )
    if key.type == "list":
        return (
            f'<elements><list id="{key.name}" key="{WINDOWS_POLICY_KEY}\\{key.name}" '
            'explicitValue="false"/></elements>'
        )
    return f'<elements><text id="{key.name}" valueName="{key.name}"/></elements>'


def admx() -> str:
    """The ADMX policy definitions."""
    policies = []
    for key in KEYS:
        value = (
            '<enabledValue><decimal value="1"/></enabledValue>'
            '<disabledValue><decimal value="0"/></disabledValue>'
            if key.type == "bool"
            else ""
        )
        name_attr = f' valueName="{key.name}"' if key.type == "bool" else ""
        policies.append(
            f'    <policy name="{key.name}" class="Machine" displayName="$(string.{key.name})" '
            f'explainText="$(string.{key.name}_Explain)" key="{WINDOWS_POLICY_KEY}"{name_attr}>'
            f'<parentCategory ref="EdgeDesk"/><supportedOn ref="SUPPORTED_ANY"/>'
            f"{value}{_admx_element(key)}</policy>"
        )
    return f"""<?xml version="1.0" encoding="utf-8"?>
<policyDefinitions xmlns="http://schemas.microsoft.com/GroupPolicy/2006/07/PolicyDefinitions" revision="1.0" schemaVersion="1.0">
  <policyNamespaces><target prefix="edgedesk" namespace="{NAMESPACE}"/></policyNamespaces>
  <resources minRequiredRevision="1.0"/>
  <supportedOn><definitions><definition name="SUPPORTED_ANY" displayName="$(string.SUPPORTED_ANY)"/></definitions></supportedOn>
  <categories><category name="EdgeDesk" displayName="$(string.EdgeDesk)"/></categories>
  <policies>
{chr(10).join(policies)}
  </policies>
</policyDefinitions>
"""


def adml() -> str:
    """The en-US ADML strings for the ADMX."""
    strings = [
        '    <string id="EdgeDesk">EdgeDesk</string>',
        '    <string id="SUPPORTED_ANY">EdgeDesk 0.1 and later</string>',
    ]
    presentations = []
    for key in KEYS:
        strings.append(f'    <string id="{key.name}">{escape(key.name)}</string>')
        strings.append(f'    <string id="{key.name}_Explain">{escape(key.description)}</string>')
        if key.type == "int":
            control = f'<decimalTextBox refId="{key.name}">{key.name}</decimalTextBox>'
        elif key.type == "list":
            control = f'<listBox refId="{key.name}">{key.name}</listBox>'
        elif key.type == "string":
            control = f'<textBox refId="{key.name}"><label>{key.name}</label></textBox>'
        else:
            continue
        presentations.append(f'    <presentation id="{key.name}">{control}</presentation>')
    return f"""<?xml version="1.0" encoding="utf-8"?>
<policyDefinitionResources xmlns="http://schemas.microsoft.com/GroupPolicy/2006/07/PolicyDefinitions" revision="1.0" schemaVersion="1.0">
  <displayName>EdgeDesk</displayName>
  <description>EdgeDesk machine policy</description>
  <resources>
   <stringTable>
{chr(10).join(strings)}
   </stringTable>
   <presentationTable>
{chr(10).join(presentations)}
   </presentationTable>
  </resources>
</policyDefinitionResources>
"""


def mobileconfig(values: dict[str, object]) -> bytes:
    """A macOS configuration profile forcing ``values`` for the app's bundle id."""
    payload = {
        "PayloadType": MACOS_BUNDLE_ID,
        "PayloadVersion": 1,
        "PayloadIdentifier": f"{MACOS_BUNDLE_ID}.policy",
        "PayloadUUID": str(uuid.uuid5(uuid.NAMESPACE_DNS, MACOS_BUNDLE_ID + ".payload")).upper(),
        "PayloadDisplayName": "EdgeDesk policy",
        **values,
    }
    profile = {
        "PayloadType": "Configuration",
        "PayloadVersion": 1,
        "PayloadIdentifier": f"{MACOS_BUNDLE_ID}.profile",
        "PayloadUUID": str(uuid.uuid5(uuid.NAMESPACE_DNS, MACOS_BUNDLE_ID)).upper(),
        "PayloadDisplayName": "EdgeDesk (managed)",
        "PayloadScope": "System",
        "PayloadContent": [payload],
    }
    return plistlib.dumps(profile)


def generate(out: Path) -> list[Path]:
    """Write every template into ``out``; returns the files written."""
    (out / "en-US").mkdir(parents=True, exist_ok=True)
    files = {
        out / "EdgeDesk.admx": admx().encode(),
        out / "en-US" / "EdgeDesk.adml": adml().encode(),
        out / f"{MACOS_BUNDLE_ID}.mobileconfig": mobileconfig(EXAMPLE),
        out / "policy.example.json": (json.dumps(EXAMPLE, indent=2) + "\n").encode(),
    }
    for path, data in files.items():
        path.write_bytes(data)
    return list(files)


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "build"
    for written in generate(target):
        print(written)

#!/usr/bin/env bash
# Sign, package, notarize and staple EdgeDesk on macOS (hosted macOS runner only; never
# runs on Linux CI). Secrets come from the CI secret store as environment variables:
#   MACOS_APP_IDENTITY        "Developer ID Application: <Org> (<TEAMID>)"
#   MACOS_INSTALLER_IDENTITY  "Developer ID Installer: <Org> (<TEAMID>)"
#   NOTARY_APPLE_ID, NOTARY_TEAM_ID, NOTARY_PASSWORD (app-specific password)
# The signing certificates must already be in the runner's keychain (imported by the
# workflow from base64 secrets into a temporary keychain).
# Usage: packaging/macos/sign_and_notarize.sh dist/freeze/EdgeDesk.app VERSION dist
set -euo pipefail
APP=${1:?path to EdgeDesk.app}; VERSION=${2:?version}; OUT=${3:?output folder}
HERE=$(cd "$(dirname "$0")" && pwd)
: "${MACOS_APP_IDENTITY:?}" "${MACOS_INSTALLER_IDENTITY:?}"
: "${NOTARY_APPLE_ID:?}" "${NOTARY_TEAM_ID:?}" "${NOTARY_PASSWORD:?}"

# 1. Sign inside-out: every dylib/.so (llama.cpp, ggml-metal, Qt, Python), then the app.
find "$APP/Contents" -type f \( -name '*.dylib' -o -name '*.so' -o -perm -111 \) -print0 |
  while IFS= read -r -d '' f; do
    codesign --force --timestamp --options runtime \
      --entitlements "$HERE/entitlements.plist" --sign "$MACOS_APP_IDENTITY" "$f"
  done
codesign --force --timestamp --options runtime --entitlements "$HERE/entitlements.plist" \
  --sign "$MACOS_APP_IDENTITY" "$APP"
codesign --verify --deep --strict --verbose=2 "$APP"

# 2. Component package into /Applications, then the signed product archive.
mkdir -p "$OUT"
pkgbuild --component "$APP" --install-location /Applications \
  --identifier org.edgedesk.EdgeDesk --version "$VERSION" "$OUT/EdgeDesk-component.pkg"
productbuild --distribution "$HERE/distribution.xml" --package-path "$OUT" \
  "$OUT/EdgeDesk-unsigned.pkg"
productsign --timestamp --sign "$MACOS_INSTALLER_IDENTITY" \
  "$OUT/EdgeDesk-unsigned.pkg" "$OUT/EdgeDesk-$VERSION.pkg"
rm -f "$OUT/EdgeDesk-unsigned.pkg" "$OUT/EdgeDesk-component.pkg"

# 3. Notarize (waits for Apple's verdict) and staple the ticket for offline Gatekeeper.
xcrun notarytool submit "$OUT/EdgeDesk-$VERSION.pkg" --apple-id "$NOTARY_APPLE_ID" \
  --team-id "$NOTARY_TEAM_ID" --password "$NOTARY_PASSWORD" --wait
xcrun stapler staple "$OUT/EdgeDesk-$VERSION.pkg"
pkgutil --check-signature "$OUT/EdgeDesk-$VERSION.pkg"
spctl --assess --type install --verbose "$OUT/EdgeDesk-$VERSION.pkg"

#!/bin/bash
mkdir -p /logs/verifier
if python3 -c 'import pyfiglet, pathlib, sys; sys.exit(pathlib.Path("/app/ok.txt").read_text() != pyfiglet.figlet_format("OK"))'; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi

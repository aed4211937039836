python3 -c 'import pyfiglet; open("/app/ok.txt", "w").write(pyfiglet.figlet_format("OK"))'

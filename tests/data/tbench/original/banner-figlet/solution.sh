figlet HELLO > /app/banner.txt

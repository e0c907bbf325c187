import time

print('importing', flush=True)
time.sleep(60)

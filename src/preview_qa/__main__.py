"""python -m preview_qa"""

from preview_qa.cli import main

main()

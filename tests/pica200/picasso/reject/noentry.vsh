.proc notmain
    end
.end

/* placeholder: being written */ typedef int mu_placeholder_t;
